// SPDX-License-Identifier: MIT
// ember-cli bench -m FILE [-p 512] [-n 128] [-r 3] [--verify-curve K] [--json]
// Prefill of p tokens in batches, then n single-token decode steps, r times; tokens per second of each, the load
// time and the peak resident memory. The tokens are fixed ids, so the figures do not depend on sampling. A model with
// a draft also decodes through sessions with and without speculation (speedup, acceptance); --verify-curve K
// times verifying 1..K tokens in one pass against one decode step. --image IMG (with the projector: --mmproj or
// beside the model) times encoding each image r times.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sys/resource.h>

#include "bench_figure.h"
#include "cli_bench_speculation.h"
#include "cli_model.h"
#include "cli_vision.h"
#include "ember/model_evaluator.h"

namespace ember::cli {

namespace {

using Clock = std::chrono::steady_clock;

double peak_rss_mib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

}  // namespace

int run_bench(const Args& raw) {
    const ParsedArgs args(raw, join(join(model_option_specs(), vision_option_specs()), {{"--n-prompt", "-p"},
                                                                                        {"--n-gen", "-n"},
                                                                                        {"--repetitions", "-r"},
                                                                                        {"--verify-curve", ""},
                                                                                        {"--json", "", false}}));
    const int64_t n_prompt = args.get_int("--n-prompt", 512);
    const int64_t n_gen = args.get_int("--n-gen", 128);
    const int64_t reps = args.get_int("--repetitions", 3);
    if (n_prompt < 1 || n_gen < 0 || reps < 1) throw UsageError("-p must be >= 1, -n >= 0, -r >= 1");

    const std::vector<std::string> image_paths = vision_from_args(args).images;
    const std::vector<vision::Image> images = load_images(image_paths);
    auto loaded = load_model_from_args(args);
    require_projector(*loaded, image_paths);
    const int64_t n_vocab = loaded->info().n_vocab;
    SessionOptions so = session_options_from_args(args);
    ModelEvaluator evaluator(loaded, n_prompt + n_gen + 1, so.kv_type);

    std::vector<int32_t> prompt(static_cast<size_t>(n_prompt));
    for (int64_t i = 0; i < n_prompt; ++i) prompt[static_cast<size_t>(i)] = static_cast<int32_t>((i * 7919 + 13) % n_vocab);
    Figure prefill, decode;
    uint64_t decode_weight_bytes = 0;  // read by the matrix products of all decode steps (the backend's counters)
    for (int64_t r = 0; r < reps; ++r) {
        evaluator.truncate(0);
        auto start = Clock::now();
        const std::vector<float>* logits = &evaluator.forward(prompt);
        prefill.runs.push_back(n_prompt / std::chrono::duration<double>(Clock::now() - start).count());
        if (n_gen == 0) continue;
        const uint64_t weight_bytes_before = evaluator.weight_bytes_read();
        start = Clock::now();
        for (int64_t i = 0; i < n_gen; ++i) {
            const int32_t next = static_cast<int32_t>(std::max_element(logits->begin(), logits->end()) - logits->begin());
            const int32_t one[1] = {next};
            logits = &evaluator.forward(one);
        }
        decode.runs.push_back(n_gen / std::chrono::duration<double>(Clock::now() - start).count());
        decode_weight_bytes += evaluator.weight_bytes_read() - weight_bytes_before;
    }

    const nlohmann::ordered_json speculation = bench_speculation(loaded, so, prompt, n_gen, reps);
    nlohmann::ordered_json verify_cost;
    if (const long long k = args.get_int("--verify-curve", 0); k > 0)
        verify_cost = bench_verify_cost(loaded, so.kv_type, prompt, static_cast<int>(std::min(k, 64LL)));

    nlohmann::ordered_json image_figures = nlohmann::ordered_json::array();
    for (size_t k = 0; k < images.size(); ++k) {
        Figure seconds;
        vision::ImageEmbedding e;
        for (int64_t r = 0; r < reps; ++r) {
            const auto start = Clock::now();
            e = loaded->projector()->encode(images[k]);
            seconds.runs.push_back(std::chrono::duration<double>(Clock::now() - start).count());
        }
        image_figures.push_back({{"image", image_paths[k]},
                                 {"width", images[k].width},
                                 {"height", images[k].height},
                                 {"tokens", e.tokens()},
                                 {"grid", {1, e.grid.merged_rows(), e.grid.merged_cols()}},
                                 {"encode_seconds", seconds.json()}});
    }

    if (args.has("--json")) {
        nlohmann::ordered_json out = {
            {"model", args.get("--model")},
            {"architecture", loaded->info().architecture},
            {"backend", loaded->backend_name()},
            {"device", device_json(loaded->device_choice())},
            {"n_params", loaded->info().n_params},
            {"weight_bytes", loaded->info().weight_bytes},
            {"n_prompt", n_prompt},
            {"n_gen", n_gen},
            {"repetitions", reps},
            {"load_seconds", loaded->load_seconds()},
            {"prefill_tokens_per_second", prefill.json()},
            {"decode_tokens_per_second", decode.json()},
            // bytes of weights one decode token reads (all matrices, the routed experts only): with the device's
            // copy bandwidth (ember-cli devices --bandwidth), the fraction of bandwidth decode achieves
            {"decode_weight_bytes_per_token",
             n_gen > 0 ? decode_weight_bytes / static_cast<uint64_t>(n_gen * reps) : uint64_t{0}},
            {"peak_rss_mib", peak_rss_mib()},
        };
        if (!speculation.is_null()) out["speculation"] = speculation;
        if (!verify_cost.is_null()) out["verify_cost"] = verify_cost;
        if (loaded->projector()) out["projector"] = projector_json(*loaded->projector());
        if (!image_figures.empty()) out["images"] = image_figures;
        std::cout << out.dump(2) << "\n";
    } else {
        std::printf("%s on %s\n", args.get("--model").c_str(), loaded->backend_name().c_str());
        std::printf("  device    %s\n", device_line(*loaded).c_str());
        std::printf("  load      %8.2f s\n", loaded->load_seconds());
        std::printf("  prefill   %8.1f tok/s  (± %.1f, %lld tokens)\n", prefill.mean(), prefill.stddev(),
                    static_cast<long long>(n_prompt));
        std::printf("  decode    %8.1f tok/s  (± %.1f, %lld tokens)\n", decode.mean(), decode.stddev(),
                    static_cast<long long>(n_gen));
        if (!speculation.is_null())
            std::printf("  %-9s %8.1f tok/s  (plain %.1f: x%.2f; %.0f %% accepted, %.2f tokens per step)\n",
                        speculation["method"].get<std::string>().c_str(),
                        speculation["speculative_decode_tokens_per_second"]["mean"].get<double>(),
                        speculation["plain_decode_tokens_per_second"]["mean"].get<double>(),
                        speculation["speedup"].get<double>(), 100.0 * speculation["acceptance_rate"].get<double>(),
                        speculation["mean_accepted_length"].get<double>());
        if (!verify_cost.is_null())
            for (const auto& point : verify_cost["curve"])
                std::printf("  verify %2d %8.2f x one decode step\n", point["tokens"].get<int>(),
                            point["relative_to_decode_step"].get<double>());
        if (loaded->projector()) std::printf("  vision    %s\n", projector_line(*loaded->projector()).c_str());
        for (const auto& f : image_figures)
            std::printf("  image     %8.3f s    (± %.3f, %lld tokens: %s)\n", f["encode_seconds"]["mean"].get<double>(),
                        f["encode_seconds"]["stddev"].get<double>(), f["tokens"].get<long long>(),
                        f["image"].get<std::string>().c_str());
        std::printf("  peak RSS  %8.1f MiB\n", peak_rss_mib());
    }
    return 0;
}

}  // namespace ember::cli
