// SPDX-License-Identifier: MIT
// ember-cli run -m FILE -p PROMPT [-n N] [sampling options] [--chat] [--no-think]
// Streams the continuation (or, with --chat, the assistant's reply) to stdout; reasoning and statistics go to
// stderr.
#include <cstdio>
#include <iostream>

#include "cli_model.h"

namespace ember::cli {

int run_run(const Args& raw) {
    const ParsedArgs args(raw, join(join(model_option_specs(), sampling_option_specs()),
                                    {{"--prompt", "-p"}, {"--n-predict", "-n"}, {"--chat", "", false},
                                     {"--no-think", "", false}, {"--system", ""}}));
    const std::string prompt = args.require("--prompt");
    auto model = load_model_from_args(args);
    Session session(model, session_options_from_args(args));
    GenerationOptions options;
    options.max_tokens = static_cast<int>(args.get_int("--n-predict", 256));
    options.sampling = sampling_from_args(args);
    options.stop = args.all("--stop");

    const StreamCallback print = [](const StreamChunk& chunk) {
        if (!chunk.reasoning.empty()) std::fputs(chunk.reasoning.c_str(), stderr);
        std::fputs(chunk.content.c_str(), stdout);
        std::fflush(stdout);
        return true;
    };
    GenerationResult result;
    if (args.has("--chat")) {
        chat::RenderRequest request;
        if (args.has("--system")) request.messages.push_back({{"role", "system"}, {"content", args.get("--system")}});
        request.messages.push_back({{"role", "user"}, {"content", prompt}});
        if (args.has("--no-think")) request.kwargs["enable_thinking"] = false;
        result = session.chat(request, options, print);
    } else {
        const Tokenizer& tok = model->tokenizer();
        result = session.generate(tok.encode(prompt, true, true), options, print);
    }
    std::fputs("\n", stdout);
    const GenerationStats& s = result.stats;
    std::fprintf(stderr, "[%lld prompt tokens (%lld reused) at %.1f tok/s, %lld generated at %.1f tok/s, stop: %s]\n",
                 static_cast<long long>(s.prompt_tokens), static_cast<long long>(s.reused_tokens),
                 s.prefill_tokens_per_second(), static_cast<long long>(s.generated_tokens),
                 s.decode_tokens_per_second(), std::string(stop_reason_name(result.stop_reason)).c_str());
    std::fprintf(stderr, "[device: %s]\n", device_line(*model).c_str());
    if (s.draft_steps > 0)
        std::fprintf(stderr, "[speculation %s: %lld of %lld drafted tokens accepted (%.0f %%), %.2f tokens per step]\n",
                     s.speculation.c_str(), static_cast<long long>(s.accepted_tokens),
                     static_cast<long long>(s.drafted_tokens), 100.0 * s.acceptance_rate(), s.mean_accepted_length());
    return 0;
}

}  // namespace ember::cli
