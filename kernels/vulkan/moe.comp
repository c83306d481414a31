// SPDX-License-Identifier: MIT
// Mixture-of-experts routing and combination.
//   mode 0 route, one invocation per token: the k largest logits (ties to the lower index; the same experts as
//     the k most probable), weights = their softmax probabilities renormalized to sum 1 (the sum clamped at
//     6.1035e-5). ids and weights rows of k.
//   mode 1 combine, one invocation per output element: out[t, i] = sum_j weights[t, j] * y[t * k + j, i].
#version 450
#include "common.glsl"
layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer In { float src[]; };  // logits (route) or y (combine)
layout(binding = 1) buffer Ids { int ids[]; };
layout(binding = 2) buffer Weights { float weights[]; };
layout(binding = 3) writeonly buffer Out { float out_f[]; };
layout(push_constant) uniform Params {
    uint mode;
    uint src_off, src_stride;
    uint ids_off, ids_stride;
    uint w_off, w_stride;
    uint out_off, out_stride;
    uint rows;   // tokens
    uint cols;   // experts (route) or width (combine)
    uint k;
} p;

void route(uint t) {
    const uint row = p.src_off + t * p.src_stride;
    float m = -1.0 / 0.0;
    for (uint e = 0u; e < p.cols; ++e) m = max(m, src[row + e]);
    float total = 0.0;
    for (uint e = 0u; e < p.cols; ++e) total += exp(src[row + e] - m);
    // Selection: the j-th pick is the largest logit below the previous pick (or equal to it at a higher index).
    float chosen = 0.0;
    float prev = 1.0 / 0.0;
    int prev_id = -1;
    for (uint j = 0u; j < p.k; ++j) {
        int best = -1;
        float best_v = 0.0;
        for (uint e = 0u; e < p.cols; ++e) {
            const float l = src[row + e];
            const bool after_prev = l < prev || (l == prev && int(e) > prev_id);
            if (after_prev && (best < 0 || l > best_v)) {
                best = int(e);
                best_v = l;
            }
        }
        ids[p.ids_off + t * p.ids_stride + j] = best;
        chosen += exp(best_v - m) / total;
        prev = best_v;
        prev_id = best;
    }
    chosen = max(chosen, 6.1035e-5);
    for (uint j = 0u; j < p.k; ++j) {
        const int e = ids[p.ids_off + t * p.ids_stride + j];
        weights[p.w_off + t * p.w_stride + j] = (exp(src[row + uint(e)] - m) / total) / chosen;
    }
}

void main() {
    const uint idx = linear_group() * 64u + gl_LocalInvocationID.x;
    if (p.mode == 0u) {
        if (idx < p.rows) route(idx);
        return;
    }
    if (idx >= p.rows * p.cols) return;
    const uint t = idx / p.cols, i = idx % p.cols;
    float o = 0.0;
    for (uint j = 0u; j < p.k; ++j)
        o += weights[p.w_off + t * p.w_stride + j] * src[p.src_off + (t * p.k + j) * p.src_stride + i];
    out_f[p.out_off + t * p.out_stride + i] = o;
}
