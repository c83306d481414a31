// SPDX-License-Identifier: MIT
// YaRN's per-pair frequency divisors and attention factor, from the formulas of Hugging Face's
// _compute_yarn_parameters.
#include "model/rope_yarn.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace ember::model {

namespace {

// The (fractional) pair index whose wavelength fits `rotations` times into the original context.
double correction_dim(double rotations, int n_rot, double base, int64_t original_context) {
    return n_rot * std::log(static_cast<double>(original_context) / (rotations * 2.0 * std::numbers::pi)) /
           (2.0 * std::log(base));
}

}  // namespace

std::vector<float> yarn_frequency_divisors(const YarnScaling& yarn, int n_rot, double freq_base) {
    double low = correction_dim(yarn.beta_fast, n_rot, freq_base, yarn.original_context);
    double high = correction_dim(yarn.beta_slow, n_rot, freq_base, yarn.original_context);
    if (yarn.truncate) {
        low = std::floor(low);
        high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, static_cast<double>(n_rot - 1));
    if (low == high) high += 0.001;  // no division by zero when both ends meet
    std::vector<float> divisors(static_cast<size_t>(n_rot / 2));
    for (size_t i = 0; i < divisors.size(); ++i) {
        const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
        const double keep = 1.0 - ramp;  // the share of the original frequency
        divisors[i] = static_cast<float>(1.0 / ((1.0 - keep) / yarn.factor + keep));
    }
    return divisors;
}

double yarn_attention_factor(const YarnScaling& yarn) {
    return yarn.factor <= 1.0 ? 1.0 : 0.1 * std::log(yarn.factor) + 1.0;
}

}  // namespace ember::model
