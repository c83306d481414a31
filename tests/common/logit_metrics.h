// SPDX-License-Identifier: MIT
// How tests compare two sets of logits (a backend against the CPU backend, the engine against a reference): the
// largest difference relative to the largest reference magnitude, and the mean KL divergence over rows.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::test {

// max |got - want| / max |want|; infinite when any difference is NaN or want is all zero.
inline double max_relative_error(const std::vector<float>& got, const std::vector<float>& want) {
    double scale = 0, worst = 0;
    for (float w : want) scale = std::max(scale, std::abs(static_cast<double>(w)));
    for (size_t i = 0; i < got.size(); ++i) {
        const double d = std::abs(static_cast<double>(got[i]) - want[i]);
        worst = std::isnan(d) ? INFINITY : std::max(worst, d);
    }
    return scale > 0 ? worst / scale : INFINITY;
}

// Mean over rows of KL(softmax(want) || softmax(got)); rows of n_vocab values.
inline double mean_kl(const std::vector<float>& got, const std::vector<float>& want, int64_t n_vocab) {
    const size_t v = static_cast<size_t>(n_vocab), rows = want.size() / v;
    const auto log_softmax = [v](const std::vector<float>& x, size_t r) {
        std::vector<double> out(x.begin() + static_cast<std::ptrdiff_t>(r * v),
                                x.begin() + static_cast<std::ptrdiff_t>((r + 1) * v));
        const double m = *std::max_element(out.begin(), out.end());
        double s = 0;
        for (double o : out) s += std::exp(o - m);
        for (double& o : out) o = o - m - std::log(s);
        return out;
    };
    double total = 0;
    for (size_t r = 0; r < rows; ++r) {
        const std::vector<double> p = log_softmax(want, r), q = log_softmax(got, r);
        for (size_t i = 0; i < v; ++i) total += std::exp(p[i]) * (p[i] - q[i]);
    }
    return rows ? total / static_cast<double>(rows) : 0;
}

}  // namespace ember::test
