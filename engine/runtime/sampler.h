// SPDX-License-Identifier: MIT
// Turns logits into the next token. The chain, in order: repetition/presence/frequency penalties over the recent
// tokens, then greedy argmax (temperature <= 0) or temperature, top-k, top-p, min-p and a seeded draw. The
// candidate distribution is exposed so that speculative decoding can accept or reject drafts against exactly the
// distribution this sampler draws from.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <vector>

#include "ember/runtime.h"

namespace ember::runtime {

struct Candidate {
    int32_t id;
    float p;  // probability after every filter, renormalized
};

class Sampler {
public:
    explicit Sampler(const SamplingParams& params);

    // Applies the penalties for `recent` (all tokens so far; only the last repeat_last_n count for repetition) to
    // `logits` in place.
    void apply_penalties(std::span<float> logits, std::span<const int32_t> recent) const;
    // The distribution the next draw uses (greedy: one candidate with p = 1). Sorted by decreasing p.
    std::vector<Candidate> distribution(std::span<const float> logits) const;
    // Penalties, distribution, draw.
    int32_t sample(std::span<float> logits, std::span<const int32_t> recent);
    // As sample(), drawing only tokens `allowed` accepts: it is asked about the drawn token first, and about every
    // token (refused ones masked out, the draw repeated) only when that one is refused. -1 when none is allowed.
    int32_t sample_allowed(std::span<float> logits, std::span<const int32_t> recent,
                           const std::function<bool(int32_t)>& allowed);
    // A draw from a distribution.
    int32_t draw(std::span<const Candidate> candidates);

    bool greedy() const { return params_.temperature <= 0.0f; }

private:
    SamplingParams params_;
    std::mt19937_64 rng_;
};

}  // namespace ember::runtime
