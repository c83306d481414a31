// SPDX-License-Identifier: MIT
// The sampling chain: penalties, top-k, top-p, min-p, temperature, and the draw.
#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

namespace ember::runtime {

namespace {

uint64_t seed_of(uint64_t seed) { return seed ? seed : std::random_device{}(); }

// Logits that are not numbers come from broken weights (or a broken kernel): sorting them is undefined and an
// argmax over them picks token 0, which used to end answers after 0 tokens without a word. Said instead.
void require_numbers(std::span<const float> logits) {
    size_t nan = 0;
    for (const float l : logits) nan += std::isnan(l) ? 1 : 0;
    if (nan > 0)
        throw Error("the model computed NaN (not a number) for " + std::to_string(nan) + " of the " +
                    std::to_string(logits.size()) +
                    " next-token scores: its weights are damaged or the backend "
                    "failed; nothing can be sampled");
}

}  // namespace

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(seed_of(params.seed)) {}

void Sampler::apply_penalties(std::span<float> logits, std::span<const int32_t> recent) const {
    const bool repeat = params_.repeat_penalty != 1.0f && params_.repeat_last_n != 0;
    const bool presence = params_.presence_penalty != 0.0f || params_.frequency_penalty != 0.0f;
    if ((!repeat && !presence) || recent.empty()) return;
    const size_t window = params_.repeat_last_n < 0 ? recent.size()
                                                    : std::min(recent.size(), size_t(params_.repeat_last_n));
    std::unordered_map<int32_t, int> counts;
    for (size_t i = recent.size() - window; i < recent.size(); ++i) ++counts[recent[i]];
    for (const auto& [id, count] : counts) {
        if (id < 0 || static_cast<size_t>(id) >= logits.size()) continue;
        float& l = logits[static_cast<size_t>(id)];
        if (repeat) l = l > 0 ? l / params_.repeat_penalty : l * params_.repeat_penalty;
        l -= params_.presence_penalty + params_.frequency_penalty * static_cast<float>(count);
    }
}

std::vector<Candidate> Sampler::distribution(std::span<const float> logits) const {
    require_numbers(logits);
    if (greedy()) {
        const auto best = std::max_element(logits.begin(), logits.end());
        return {{static_cast<int32_t>(best - logits.begin()), 1.0f}};
    }
    std::vector<Candidate> c(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) c[i] = {static_cast<int32_t>(i), logits[i] / params_.temperature};
    auto by_logit = [](const Candidate& a, const Candidate& b) { return a.p > b.p || (a.p == b.p && a.id < b.id); };
    if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < c.size()) {
        std::partial_sort(c.begin(), c.begin() + params_.top_k, c.end(), by_logit);
        c.resize(static_cast<size_t>(params_.top_k));
    } else {
        std::sort(c.begin(), c.end(), by_logit);
    }
    // Softmax over the survivors (c is sorted, so c[0] holds the maximum).
    const float max = c.front().p;
    double sum = 0.0;
    for (Candidate& x : c) {
        x.p = std::exp(x.p - max);
        sum += x.p;
    }
    for (Candidate& x : c) x.p = static_cast<float>(x.p / sum);
    if (params_.top_p < 1.0f) {
        double cumulative = 0.0;
        size_t keep = 0;
        while (keep < c.size()) {
            cumulative += c[keep++].p;
            if (cumulative >= params_.top_p) break;
        }
        c.resize(std::max<size_t>(keep, 1));
    }
    if (params_.min_p > 0.0f) {
        const float threshold = params_.min_p * c.front().p;
        size_t keep = 1;
        while (keep < c.size() && c[keep].p >= threshold) ++keep;
        c.resize(keep);
    }
    double total = 0.0;
    for (const Candidate& x : c) total += x.p;
    for (Candidate& x : c) x.p = static_cast<float>(x.p / total);
    return c;
}

int32_t Sampler::draw(std::span<const Candidate> candidates) {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const double u = uniform(rng_);
    double cumulative = 0.0;
    for (const Candidate& c : candidates) {
        cumulative += c.p;
        if (u < cumulative) return c.id;
    }
    return candidates.back().id;
}

int32_t Sampler::sample(std::span<float> logits, std::span<const int32_t> recent) {
    apply_penalties(logits, recent);
    const std::vector<Candidate> candidates = distribution(logits);
    return candidates.size() == 1 ? candidates.front().id : draw(candidates);
}

int32_t Sampler::sample_allowed(std::span<float> logits, std::span<const int32_t> recent,
                                const std::function<bool(int32_t)>& allowed) {
    apply_penalties(logits, recent);
    std::vector<Candidate> candidates = distribution(logits);
    const int32_t first = candidates.size() == 1 ? candidates.front().id : draw(candidates);
    if (allowed(first)) return first;
    bool any = false;
    for (size_t i = 0; i < logits.size(); ++i) {
        if (allowed(static_cast<int32_t>(i))) any = true;
        else logits[i] = -std::numeric_limits<float>::infinity();
    }
    if (!any) return -1;
    candidates = distribution(logits);
    std::erase_if(candidates, [&](const Candidate& c) { return !std::isfinite(logits[static_cast<size_t>(c.id)]); });
    if (candidates.empty()) return -1;
    return candidates.size() == 1 ? candidates.front().id : draw(candidates);
}

}  // namespace ember::runtime
