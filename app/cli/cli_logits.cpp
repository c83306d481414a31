// SPDX-License-Identifier: MIT
// ember-cli logits -m FILE --tokens 1,2,3 -o out.f32 [--batch N] [--mmproj P --image IMG ...]
// Writes raw float32 logits [n_tokens x n_vocab] of every position. --batch N feeds the tokens N at a time
// (1 = token-by-token decoding), so prefill and decode can be compared against the same reference. With --image,
// the tokens hold each image's run of <|image_pad|> ids; those rows take the image's embeddings and M-RoPE
// positions.
#include <fstream>
#include <iostream>

#include "cli_model.h"
#include "cli_vision.h"
#include "ember/model_evaluator.h"

namespace ember::cli {

int run_logits(const Args& raw) {
    const ParsedArgs args(raw, join(join(model_option_specs(), vision_option_specs()),
                                    {{"--tokens", ""}, {"--output", "-o"}, {"--batch", ""}}));
    const std::vector<int32_t> tokens = parse_token_list(args.require("--tokens"));
    const std::string out_path = args.require("--output");
    const long long batch = args.get_int("--batch", 0);
    if (batch < 0) throw UsageError("--batch must be positive");
    const std::vector<std::string> image_paths = vision_from_args(args).images;
    const std::vector<vision::Image> images = load_images(image_paths);
    auto model = load_model_from_args(args);
    require_projector(*model, image_paths);
    SessionOptions session_options = session_options_from_args(args);
    session_options.n_ctx = std::max<int64_t>(session_options.n_ctx, static_cast<int64_t>(tokens.size()) + 1);

    std::vector<float> logits;
    if (!images.empty()) {
        const std::optional<int32_t> pad = model->tokenizer().find_token("<|image_pad|>");
        if (!pad) throw Error(model->file().name() + ": the vocabulary has no <|image_pad|> token for --image");
        std::vector<vision::ImageEmbedding> embeddings;
        for (const vision::Image& image : images) embeddings.push_back(model->projector()->encode(image));
        ModelEvaluator evaluator(model, static_cast<int64_t>(tokens.size()) + 1, session_options.kv_type);
        logits = evaluator.forward_image_prompt(tokens, *pad, std::move(embeddings), image_paths,
                                                static_cast<size_t>(batch));
    } else {
        Session session(model, session_options);
        const size_t step = batch == 0 ? tokens.size() : static_cast<size_t>(batch);
        for (size_t first = 0; first < tokens.size(); first += step) {
            const std::vector<float> part =
                session.append(std::span(tokens).subspan(first, std::min(step, tokens.size() - first)));
            logits.insert(logits.end(), part.begin(), part.end());
        }
    }
    std::ofstream out(out_path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(logits.data()), static_cast<std::streamsize>(logits.size() * 4));
    if (!out) throw Error(out_path + ": cannot write");
    std::cerr << tokens.size() << " x " << model->info().n_vocab << " logits written to " << out_path << "\n";
    return 0;
}

}  // namespace ember::cli
