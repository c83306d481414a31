// SPDX-License-Identifier: MIT
// ember-cli run -m FILE -p PROMPT [-n N] [sampling options] [--chat] [--no-think] [--reasoning-effort E]
//               [--mmproj P] [--image IMG ...]
// Streams the continuation (or, with --chat, the assistant's reply) to stdout; reasoning and statistics go to
// stderr. With --chat, each --image is a content part of the user's message, before the text.
#include <cstdio>
#include <iostream>

#include "cli_model.h"
#include "cli_vision.h"

namespace ember::cli {

int run_run(const Args& raw) {
    const ParsedArgs args(raw,
                          join(join(join(join(model_option_specs(), sampling_option_specs()), vision_option_specs()),
                                    chat_switch_option_specs()),
                               {{"--prompt", "-p"}, {"--n-predict", "-n"}, {"--chat", "", false}, {"--system", ""}}));
    const std::string prompt = args.require("--prompt");
    const std::vector<std::string> image_paths = vision_from_args(args).images;
    if (!image_paths.empty() && !args.has("--chat")) throw UsageError("--image needs --chat (images are chat content)");
    const std::vector<vision::Image> images = load_images(image_paths);
    auto model = load_model_from_args(args);
    require_projector(*model, image_paths);
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
        if (images.empty()) {
            request.messages.push_back({{"role", "user"}, {"content", prompt}});
        } else {
            nlohmann::ordered_json parts = nlohmann::ordered_json::array();
            for (size_t i = 0; i < images.size(); ++i) parts.push_back({{"type", "image"}});
            parts.push_back({{"type", "text"}, {"text", prompt}});
            request.messages.push_back({{"role", "user"}, {"content", std::move(parts)}});
            options.on_image = [](int done, int total) {
                std::fprintf(stderr, "[reading image %d of %d]\n", done + 1, total);
            };
        }
        chat_switches_from_args(args, request.kwargs);
        result = images.empty() ? session.chat(request, options, print) : session.chat(request, images, options, print);
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
    if (model->projector())
        std::fprintf(stderr, "[vision projector: %s]\n", projector_line(*model->projector()).c_str());
    if (s.image_tokens > 0)
        std::fprintf(stderr, "[%lld image tokens of the prompt, encoded in %.3f s]\n",
                     static_cast<long long>(s.image_tokens), s.image_seconds);
    if (s.draft_steps > 0)
        std::fprintf(stderr, "[speculation %s: %lld of %lld drafted tokens accepted (%.0f %%), %.2f tokens per step]\n",
                     std::string(speculation_name(s.speculation)).c_str(), static_cast<long long>(s.accepted_tokens),
                     static_cast<long long>(s.drafted_tokens), 100.0 * s.acceptance_rate(), s.mean_accepted_length());
    return 0;
}

}  // namespace ember::cli
