// SPDX-License-Identifier: MIT
// The scale-byte search shared by the ROCmFP4/ROCmFPX quantizers (../shared/specs/rocmfp4.md §4.2, §4.3).
//
// A Codec describes one code set:
//   static constexpr float start_divisor;       // e0 is the byte whose scale is nearest to max|x| / start_divisor
//   static float top(float x);                  // the largest magnitude a code of x's sign can represent
//   static uint8_t encode(float x, float s, float inv);   // the code of x at scale s (inv = 1.0f / s)
//   static float value(uint8_t code);           // the code's value in units of the scale
//
// Files including this header are compiled with FP contraction disabled: near-ties depend on every fp32 rounding.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "quant/quant.h"

namespace ember::quant::detail {

constexpr float scale_of(int e) { return rocmfp_scale(static_cast<uint8_t>(e)); }

// The valid byte in [1, 126] whose scale is nearest to target; an exact midpoint picks the lower byte.
inline int nearest_scale_byte(float target) {
    if (!(target > scale_of(1))) return 1;
    if (target >= scale_of(126)) return 126;
    int lo = 1, hi = 126;  // smallest e with scale_of(e) >= target
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (scale_of(mid) >= target) hi = mid;
        else lo = mid + 1;
    }
    const double above = static_cast<double>(scale_of(lo)) - target;
    const double below = static_cast<double>(target) - scale_of(lo - 1);
    return above < below ? lo : lo - 1;
}

// Squared error of the sub-block at scale byte e, accumulated in fp32 in index order; stops once it exceeds
// `bound` (the result is then only known to be > bound). w: weights or nullptr.
template <typename Codec>
float scale_error(const float* x, const float* w, int n, int e, float bound) {
    const float s = scale_of(e);
    const float inv = 1.0f / s;
    float err = 0.0f;
    for (int i = 0; i < n; ++i) {
        const float d = x[i] - Codec::value(Codec::encode(x[i], s, inv)) * s;
        err += w ? w[i] * (d * d) : d * d;
        if (err > bound) break;
    }
    return err;
}

// The scale byte minimising the (weighted) squared error over [1, 126], ties to the smallest byte; 0 when the
// sub-block's largest magnitude is not a positive finite number (any NaN or infinity in it, or all zeros).
template <typename Codec>
int choose_scale_byte(const float* x, const float* w, int n) {
    float max = 0.0f;
    int at = 0;
    for (int i = 0; i < n; ++i) {
        if (!std::isfinite(x[i])) return 0;
        if (std::fabs(x[i]) > max) {
            max = std::fabs(x[i]);
            at = i;
        }
    }
    if (!(max > 0.0f)) return 0;
    const float w_max = w ? w[at] : 1.0f;
    const float top = Codec::top(x[at]);

    const int e0 = nearest_scale_byte(max / Codec::start_divisor);
    int best_e = e0;
    float best = scale_error<Codec>(x, w, n, e0, std::numeric_limits<float>::infinity());
    for (int e = e0 - 1; e >= 1; --e) {
        // Below this scale the largest weight is clipped by more than the best error: smaller ones only clip more.
        const float clip = max - top * scale_of(e);
        if (clip > 0.0f && w_max * (clip * clip) > best) break;
        const float err = scale_error<Codec>(x, w, n, e, best);
        if (err <= best) {  // e < best_e here, so a tie moves to the smaller byte
            best = err;
            best_e = e;
        }
    }
    for (int e = e0 + 1; e <= 126; ++e) {
        const float err = scale_error<Codec>(x, w, n, e, best);
        if (err < best) {
            best = err;
            best_e = e;
        }
    }
    return best_e;
}

// Encodes a sub-block at its chosen byte (e = 0 gives all codes 0).
template <typename Codec>
void encode_sub_block(const float* x, int n, int e, uint8_t* codes) {
    const float s = scale_of(e);
    const float inv = e == 0 ? 0.0f : 1.0f / s;
    for (int i = 0; i < n; ++i) codes[i] = e == 0 ? 0 : Codec::encode(x[i], s, inv);
}

// §4.3 weights for one row: imatrix_i * sqrt(sigma2 + x_i^2), 0 where the imatrix entry is not finite or <= 0.
inline void rocmfp_importance(const float* x, const float* imatrix, int64_t n, float sigma2, float* w) {
    for (int64_t i = 0; i < n; ++i) {
        const float im = imatrix[i];
        w[i] = std::isfinite(im) && im > 0.0f ? im * std::sqrt(sigma2 + x[i] * x[i]) : 0.0f;
    }
}

// sigma^2 of §4.3: the mean of x^2 over the row, in fp32 in index order (non-finite weights left out).
inline float rocmfp_sigma2(const float* x, int64_t n) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i)
        if (std::isfinite(x[i])) sum += x[i] * x[i];
    return sum / static_cast<float>(n);
}

}  // namespace ember::quant::detail
