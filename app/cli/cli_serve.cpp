// SPDX-License-Identifier: MIT
// ember-cli serve -m FILE [--host 127.0.0.1] [--port 8080] [--api-key KEY] [--ctx N] [--backend ...] [--mmproj P]
// An OpenAI-compatible server on the model until SIGINT or SIGTERM. With a vision projector (--mmproj, or an
// mmproj*.gguf beside the model; --no-mmproj: none), chat requests may carry images as data: URLs. The key may also
// come from EMBER_API_KEY (so that it does not show in the process list). Prints "listening on URL" on stdout once
// it accepts connections.
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli_model.h"
#include "engine_thread.h"
#include "openai_server.h"

namespace ember::cli {

int run_serve(const Args& raw) {
    const ParsedArgs args(raw, join(model_option_specs(), {{"--mmproj", ""},
                                                           {"--no-mmproj", "", false},
                                                           {"--max-pixels", ""},
                                                           {"--host", ""},
                                                           {"--port", ""},
                                                           {"--api-key", ""},
                                                           {"--alias", ""},
                                                           {"--max-body-mb", ""},
                                                           {"--request-timeout", ""},
                                                           {"--http-threads", ""}}));
    server::ServerOptions options;
    options.host = args.get("--host", options.host);
    const long long port = args.get_int("--port", options.port);
    if (port < 0 || port > 65535) throw UsageError("--port must be 0 (any free port) to 65535");
    options.port = static_cast<int>(port);
    options.api_key = args.get("--api-key", std::getenv("EMBER_API_KEY") ? std::getenv("EMBER_API_KEY") : "");
    const long long body_mb = args.get_int("--max-body-mb", 8);
    if (body_mb < 1) throw UsageError("--max-body-mb must be 1 or more");
    options.max_body_bytes = static_cast<size_t>(body_mb) << 20;
    const double deadline = args.get_double("--request-timeout", 10.0);
    if (!(deadline > 0)) throw UsageError("--request-timeout must be a positive number of seconds");
    options.request_deadline = std::chrono::milliseconds(static_cast<int64_t>(deadline * 1000));
    options.http_threads = static_cast<int>(args.get_int("--http-threads", options.http_threads));
    if (options.http_threads < 2) throw UsageError("--http-threads must be 2 or more");

    // The signals are waited for below; block them before any thread starts so that every thread inherits that.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    const std::filesystem::path path = args.require("--model");
    auto model = load_model_from_args(args);
    server::EngineThread engine(model, session_options_from_args(args), args.get("--alias", path.stem().string()));
    server::OpenAiServer http(engine, options);
    http.start();
    std::cout << "listening on " << http.base_url() << std::endl;
    if (model->projector()) std::cerr << "vision projector: " << model->projector()->path() << "\n";
    if (options.host != "127.0.0.1" && options.host != "localhost" && options.host != "::1" && options.api_key.empty())
        std::cerr << "warning: serving on " << options.host
                  << " without --api-key: anyone who can reach it may use it\n";
    int signal = 0;
    sigwait(&signals, &signal);
    std::cerr << "stopping\n";
    http.stop();
    return 0;
}

}  // namespace ember::cli
