// SPDX-License-Identifier: MIT
// YaRN context extension (rope.scaling.type = yarn) expressed as what the backends already run: a divisor per RoPE
// pair (Backend::rope's freq_factors) and a factor on the attention scores.
#pragma once

#include <cstdint>
#include <vector>

namespace ember::model {

struct YarnScaling {
    double factor = 1.0;          // rope.scaling.factor: context length / original_context
    int64_t original_context = 0;  // rope.scaling.original_context_length
    double beta_fast = 32.0;      // rope.scaling.yarn_beta_fast: rotations above which a pair keeps its frequency
    double beta_slow = 1.0;       // rope.scaling.yarn_beta_slow: rotations below which a pair is interpolated
    // Hugging Face rounds the ramp's ends outward (floor/ceil) unless the config says truncate: false, as gpt-oss's
    // does.
    bool truncate = true;
};

// The divisor of each of the n_rot / 2 pairs' angles: pair i turns at base^(-2i/n_rot) times
// (1 - r_i) / factor + r_i, r_i = 1 - ramp(i) falling from 1 (fast pairs, unchanged) to 0 (slow pairs, divided by
// factor) between the pairs that make beta_fast and beta_slow turns over the original context.
std::vector<float> yarn_frequency_divisors(const YarnScaling& yarn, int n_rot, double freq_base);

// The factor on cos and sin, 0.1 ln(factor) + 1 (1 when factor <= 1); the attention scores scale by its square.
double yarn_attention_factor(const YarnScaling& yarn);

}  // namespace ember::model
