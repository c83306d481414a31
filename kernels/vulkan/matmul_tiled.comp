// SPDX-License-Identifier: MIT
// Prefill: out[t, r] = sum_k w[r, k] * x[t, k] (+ bias[r]) in 64-row x 32-token tiles. Each step dequantizes a
// 64 x 32 slice of weights and a 32 x 32 slice of activations into shared memory; each invocation then keeps a
// 4 x 2 block of sums in registers.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(binding = 0) readonly buffer Weights { uint W[]; };
layout(binding = 1) readonly buffer X { float x[]; };
layout(binding = 2) writeonly buffer Out { float out_f[]; };
layout(binding = 3) readonly buffer Bias { float bias[]; };
layout(push_constant) uniform Params {
    uint w_off;
    uint w_stride;
    uint x_off;
    uint x_stride;
    uint out_off;
    uint out_stride;
    uint cols;
    uint rows;
    uint tokens;
    uint bias_off;
    uint has_bias;
} p;
#include "dequant.glsl"

const uint BM = 64u, BN = 32u, BK = 32u;
shared float w_tile[BK][BM + 1u];
shared float x_tile[BK][BN + 1u];

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint row0 = gl_WorkGroupID.x * BM;
    const uint tok0 = gl_WorkGroupID.y * BN;
    const uint tr = (tid % 16u) * 4u;  // this invocation's 4 rows within the tile
    const uint tt = (tid / 16u) * 2u;  // and 2 tokens
    float acc[4][2];
    for (uint i = 0u; i < 4u; ++i) acc[i][0] = acc[i][1] = 0.0;

    for (uint k0 = 0u; k0 < p.cols; k0 += BK) {
        for (uint e = tid; e < BM * BK; e += 256u) {
            const uint rr = e / BK, kk = e % BK;
            const uint r = row0 + rr, k = k0 + kk;
            w_tile[kk][rr] = (r < p.rows && k < p.cols) ? dq_elem(p.w_off + r * p.w_stride, k) : 0.0;
        }
        for (uint e = tid; e < BN * BK; e += 256u) {
            const uint tt2 = e / BK, kk = e % BK;
            const uint t = tok0 + tt2, k = k0 + kk;
            x_tile[kk][tt2] = (t < p.tokens && k < p.cols) ? x[p.x_off + t * p.x_stride + k] : 0.0;
        }
        barrier();
        for (uint kk = 0u; kk < BK; ++kk) {
            const float x0 = x_tile[kk][tt], x1 = x_tile[kk][tt + 1u];
            for (uint i = 0u; i < 4u; ++i) {
                const float w = w_tile[kk][tr + i];
                acc[i][0] += w * x0;
                acc[i][1] += w * x1;
            }
        }
        barrier();
    }
    for (uint i = 0u; i < 4u; ++i) {
        const uint r = row0 + tr + i;
        if (r >= p.rows) continue;
        const float b = p.has_bias != 0u ? bias[p.bias_off + r] : 0.0;
        for (uint j = 0u; j < 2u; ++j) {
            const uint t = tok0 + tt + j;
            if (t < p.tokens) out_f[p.out_off + t * p.out_stride + r] = acc[i][j] + b;
        }
    }
}
