// SPDX-License-Identifier: MIT
#include "cli_bench_speculation.h"

#include <algorithm>
#include <chrono>

#include "bench_figure.h"
#include "ember/model_evaluator.h"

namespace ember::cli {

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

nlohmann::ordered_json bench_speculation(const std::shared_ptr<LoadedModel>& model, SessionOptions options,
                                         std::span<const int32_t> prompt, int64_t n_gen, int64_t reps) {
    if (model->speculation() == Speculation::none || n_gen == 0) return nullptr;
    options.n_ctx = static_cast<int64_t>(prompt.size()) + n_gen + 64;  // room for the last draft
    GenerationOptions greedy;
    greedy.max_tokens = static_cast<int>(n_gen);
    greedy.ignore_end_of_generation = true;
    Figure plain_tps, spec_tps;
    GenerationStats total;
    bool identical = true;
    for (int64_t r = 0; r < reps; ++r) {
        options.speculate = false;
        Session plain(model, options);
        const GenerationResult p = plain.generate(prompt, greedy);
        options.speculate = true;
        Session spec(model, options);
        const GenerationResult s = spec.generate(prompt, greedy);
        identical = identical && p.tokens == s.tokens;
        plain_tps.runs.push_back(p.stats.decode_tokens_per_second());
        spec_tps.runs.push_back(s.stats.decode_tokens_per_second());
        total.draft_steps += s.stats.draft_steps;
        total.drafted_tokens += s.stats.drafted_tokens;
        total.accepted_tokens += s.stats.accepted_tokens;
        total.last_draft_length = s.stats.last_draft_length;
    }
    return {{"method", speculation_name(model->speculation())},
            {"draft_length", options.draft_length == 0 ? nlohmann::ordered_json("adaptive")
                                                       : nlohmann::ordered_json(options.draft_length)},
            {"plain_decode_tokens_per_second", plain_tps.json()},
            {"speculative_decode_tokens_per_second", spec_tps.json()},
            {"speedup", plain_tps.mean() > 0 ? spec_tps.mean() / plain_tps.mean() : 0.0},
            {"acceptance_rate", total.acceptance_rate()},
            {"mean_accepted_length", total.mean_accepted_length()},
            {"draft_steps", total.draft_steps},
            {"drafted_tokens", total.drafted_tokens},
            {"accepted_tokens", total.accepted_tokens},
            {"last_draft_length", total.last_draft_length},
            {"identical_output", identical}};
}

nlohmann::ordered_json bench_verify_cost(const std::shared_ptr<const LoadedModel>& model, KvCacheType kv_type,
                                         std::span<const int32_t> prompt, int max_tokens) {
    const auto n = static_cast<int64_t>(prompt.size());
    ModelEvaluator evaluator(model, n + max_tokens + 1, kv_type, max_tokens);
    evaluator.forward(prompt);
    evaluator.checkpoint();  // a recurrent state returns here after the plain steps, which keep no snapshots
    std::vector<int32_t> tokens(static_cast<size_t>(max_tokens));
    for (int i = 0; i < max_tokens; ++i) tokens[static_cast<size_t>(i)] = prompt[static_cast<size_t>(i) % prompt.size()];
    // Median of 5 timed runs after one warm-up; each run is cut back to the prompt afterwards.
    const auto time = [&](int k, bool verify) {
        std::vector<double> seconds;
        for (int run = 0; run < 6; ++run) {
            const auto start = Clock::now();
            evaluator.forward(std::span<const int32_t>(tokens).first(static_cast<size_t>(k)), verify, verify ? k : 0);
            if (run > 0) seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
            if (evaluator.truncate(n) != n) throw Error("verify-cost bench: the state could not return to the prompt");
        }
        return median(seconds);
    };
    const double step = time(1, false);
    nlohmann::ordered_json curve = nlohmann::ordered_json::array();
    for (int k = 1; k <= max_tokens; ++k) {
        const double seconds = time(k, true);
        curve.push_back({{"tokens", k}, {"seconds", seconds}, {"relative_to_decode_step", seconds / step}});
    }
    return {{"decode_step_seconds", step}, {"curve", curve}};
}

}  // namespace ember::cli
