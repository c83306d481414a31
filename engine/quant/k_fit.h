// SPDX-License-Identifier: MIT
// Least-squares fitting of the K-quant sub-block scales. Ember's own method: try a small set of candidate scales,
// round every weight to its nearest code under each, refit the scale (and minimum) by weighted least squares on
// those codes, and keep the pair of least weighted squared error.
#pragma once

#include <cstdint>

namespace ember::quant::detail {

// x ~ s * q with integer q in [-q_neg, q_pos]; returns s (negative when the largest magnitude is positive and is
// best mapped to -q_neg). w: non-negative weights, at least one positive.
float fit_symmetric(const float* x, const float* w, int n, int q_neg, int q_pos);

struct AffineFit {
    float scale;  // >= 0
    float min;    // >= 0; x ~ scale * q - min
};
// x ~ scale * q - min with integer q in [0, q_max].
AffineFit fit_affine(const float* x, const float* w, int n, int q_max);

// Per-weight importance (spec §4.3 form): imatrix_i * sqrt(sigma2 + x_i^2), or 1 without an imatrix. A block whose
// weights are all zero gets weight 1 everywhere, so that the fit stays defined.
void importance_weights(const float* x, const float* imatrix, float sigma2, int n, float* w);
// Mean of x^2 over the row (sigma^2 of §4.3).
float mean_square(const float* x, int64_t n);

int nearest_int(float v);

}  // namespace ember::quant::detail
