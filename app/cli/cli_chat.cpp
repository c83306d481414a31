// SPDX-License-Identifier: MIT
// ember-cli chat -m FILE [--system TEXT] [--no-think] [sampling options]
// An interactive conversation on the terminal. Ctrl-C stops the reply being generated; Ctrl-C at the prompt (or
// Ctrl-D) leaves. Reasoning is shown dimmed.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <pthread.h>
#include <thread>
#include <unistd.h>

#include "cli_model.h"

namespace ember::cli {

namespace {

// SIGINT is blocked in every thread and taken by this watcher with sigwait(), so the handler needs no global.
class InterruptWatcher {
public:
    explicit InterruptWatcher(Session& session) : session_(session) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        pthread_sigmask(SIG_BLOCK, &set, nullptr);
        thread_ = std::thread([this, set] {
            while (true) {
                int sig = 0;
                if (sigwait(&set, &sig) != 0) return;
                if (generating_.load()) {
                    session_.cancel();
                } else {
                    std::fputs("\n", stdout);
                    std::_Exit(130);
                }
            }
        });
        thread_.detach();
    }
    void generating(bool on) { generating_.store(on); }

private:
    Session& session_;
    std::atomic<bool> generating_{false};
    std::thread thread_;
};

}  // namespace

int run_chat(const Args& raw) {
    const ParsedArgs args(raw, join(join(model_option_specs(), sampling_option_specs()),
                                    {{"--system", ""}, {"--no-think", "", false}, {"--n-predict", "-n"}}));
    auto model = load_model_from_args(args);
    Session session(model, session_options_from_args(args));
    InterruptWatcher watcher(session);
    GenerationOptions options;
    options.max_tokens = static_cast<int>(args.get_int("--n-predict", -1));
    options.sampling = sampling_from_args(args);
    if (!args.has("--temp")) options.sampling.temperature = 0.7f;
    options.stop = args.all("--stop");
    options.on_context_full = ContextFullPolicy::stop;

    chat::RenderRequest conversation;
    if (args.has("--system")) conversation.messages.push_back({{"role", "system"}, {"content", args.get("--system")}});
    if (args.has("--no-think")) conversation.kwargs["enable_thinking"] = false;
    const bool tty = ::isatty(STDOUT_FILENO);
    std::fprintf(stderr, "%s: chatting (Ctrl-C stops a reply, Ctrl-D leaves)\n", model->info().name.c_str());
    std::string line;
    while (true) {
        std::fputs(tty ? "\033[1m> \033[0m" : "> ", stdout);
        std::fflush(stdout);
        if (!std::getline(std::cin, line)) break;
        if (line.empty()) continue;
        conversation.messages.push_back({{"role", "user"}, {"content", line}});
        bool in_reasoning = false;
        watcher.generating(true);
        const GenerationResult result = session.chat(conversation, options, [&](const StreamChunk& chunk) {
            if (!chunk.reasoning.empty()) {
                if (tty && !in_reasoning) std::fputs("\033[2m", stdout);
                in_reasoning = true;
                std::fputs(chunk.reasoning.c_str(), stdout);
            }
            if (!chunk.content.empty()) {
                if (tty && in_reasoning) std::fputs("\033[0m\n", stdout);
                in_reasoning = false;
                std::fputs(chunk.content.c_str(), stdout);
            }
            std::fflush(stdout);
            return true;
        });
        watcher.generating(false);
        if (tty && in_reasoning) std::fputs("\033[0m", stdout);
        std::fputs(result.stop_reason == StopReason::cancelled ? " [stopped]\n" : "\n", stdout);
        nlohmann::ordered_json reply = {{"role", "assistant"}, {"content", result.content}};
        if (!result.reasoning.empty()) reply["reasoning_content"] = result.reasoning;
        conversation.messages.push_back(std::move(reply));
        if (result.stop_reason == StopReason::context_full) {
            std::fputs("[the context is full; start a new chat]\n", stderr);
            break;
        }
    }
    return 0;
}

}  // namespace ember::cli
