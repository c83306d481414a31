// SPDX-License-Identifier: MIT
// Least-squares fitting of the K-quant sub-block scales.
#include "quant/k_fit.h"

#include <cmath>
#include <initializer_list>

namespace ember::quant::detail {

namespace {

int clamp_int(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Weighted error of x ~ s * q for the codes q chosen by rounding x * inv_scale; the scale refit by least squares.
struct SymmetricTrial {
    float scale;
    float error;
};

SymmetricTrial try_symmetric(const float* x, const float* w, int n, float inv_scale, int q_neg, int q_pos) {
    double sum_xq = 0, sum_qq = 0;
    int q[32];
    for (int i = 0; i < n; ++i) {
        q[i] = clamp_int(nearest_int(x[i] * inv_scale), -q_neg, q_pos);
        sum_xq += static_cast<double>(w[i]) * x[i] * q[i];
        sum_qq += static_cast<double>(w[i]) * q[i] * q[i];
    }
    if (sum_qq <= 0) return {0.0f, INFINITY};
    const auto scale = static_cast<float>(sum_xq / sum_qq);
    double error = 0;
    for (int i = 0; i < n; ++i) {
        const double d = x[i] - static_cast<double>(scale) * q[i];
        error += w[i] * d * d;
    }
    return {scale, static_cast<float>(error)};
}

struct AffineTrial {
    AffineFit fit;
    double error;
};

// Codes from rounding (x - lo) * inv_scale, then the least-squares scale and offset, with the offset kept <= 0.
AffineTrial try_affine(const float* x, const float* w, int n, float lo, float inv_scale, int q_max) {
    int q[32];
    double sw = 0, sq = 0, sqq = 0, sx = 0, sxq = 0;
    for (int i = 0; i < n; ++i) {
        q[i] = clamp_int(nearest_int((x[i] - lo) * inv_scale), 0, q_max);
        sw += w[i];
        sq += static_cast<double>(w[i]) * q[i];
        sqq += static_cast<double>(w[i]) * q[i] * q[i];
        sx += static_cast<double>(w[i]) * x[i];
        sxq += static_cast<double>(w[i]) * x[i] * q[i];
    }
    double scale = 0, offset = 0;
    const double det = sw * sqq - sq * sq;
    if (det > 0) {
        scale = (sw * sxq - sq * sx) / det;
        offset = (sqq * sx - sq * sxq) / det;
    }
    if (det <= 0 || offset > 0 || scale < 0) {  // offset pinned at 0: the format stores -offset as unsigned
        offset = 0;
        scale = sqq > 0 ? sxq / sqq : 0;
        if (scale < 0) scale = 0;
    }
    double error = 0;
    for (int i = 0; i < n; ++i) {
        const double d = x[i] - (scale * q[i] + offset);
        error += w[i] * d * d;
    }
    return {{static_cast<float>(scale), static_cast<float>(-offset)}, error};
}

}  // namespace

int nearest_int(float v) { return static_cast<int>(std::lrint(v)); }

float fit_symmetric(const float* x, const float* w, int n, int q_neg, int q_pos) {
    float amax = 0, max = 0;
    for (int i = 0; i < n; ++i) {
        if (std::fabs(x[i]) > amax) {
            amax = std::fabs(x[i]);
            max = x[i];
        }
    }
    if (amax == 0) return 0.0f;
    SymmetricTrial best{0.0f, INFINITY};
    for (int step = -9; step <= 9; ++step) {
        // The largest magnitude lands near -q_neg (the one code without a positive twin) or near +q_pos.
        for (const float target : {-(q_neg + 0.1f * step), q_pos + 0.1f * step}) {
            const SymmetricTrial t = try_symmetric(x, w, n, target / max, q_neg, q_pos);
            if (t.error < best.error) best = t;
        }
    }
    // One refinement: round again under the best scale.
    if (best.scale != 0) {
        const SymmetricTrial t = try_symmetric(x, w, n, 1.0f / best.scale, q_neg, q_pos);
        if (t.error < best.error) best = t;
    }
    return best.scale;
}

AffineFit fit_affine(const float* x, const float* w, int n, int q_max) {
    float lo = x[0], hi = x[0];
    for (int i = 1; i < n; ++i) {
        lo = std::fmin(lo, x[i]);
        hi = std::fmax(hi, x[i]);
    }
    if (lo > 0) lo = 0;
    if (hi <= lo) return {0.0f, -lo};
    AffineTrial best{{0.0f, -lo}, INFINITY};
    for (int step = -10; step <= 10; ++step) {
        const float inv_scale = (q_max + 0.1f * step) / (hi - lo);
        if (inv_scale <= 0) continue;
        const AffineTrial t = try_affine(x, w, n, lo, inv_scale, q_max);
        if (t.error < best.error) best = t;
    }
    for (int iteration = 0; iteration < 2 && best.fit.scale > 0; ++iteration) {
        const AffineTrial t = try_affine(x, w, n, -best.fit.min, 1.0f / best.fit.scale, q_max);
        if (!(t.error < best.error)) break;
        best = t;
    }
    return best.fit;
}

void importance_weights(const float* x, const float* imatrix, float sigma2, int n, float* w) {
    float total = 0;
    for (int i = 0; i < n; ++i) {
        if (!imatrix) {
            w[i] = 1.0f;
        } else {
            const float im = imatrix[i];
            w[i] = std::isfinite(im) && im > 0 ? im * std::sqrt(sigma2 + x[i] * x[i]) : 0.0f;
        }
        total += w[i];
    }
    if (!(total > 0))
        for (int i = 0; i < n; ++i) w[i] = 1.0f;
}

float mean_square(const float* x, int64_t n) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i)
        if (std::isfinite(x[i])) sum += static_cast<double>(x[i]) * x[i];
    return n > 0 ? static_cast<float>(sum / static_cast<double>(n)) : 0.0f;
}

}  // namespace ember::quant::detail
