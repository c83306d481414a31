// SPDX-License-Identifier: MIT
// Prefill on cooperative matrices (coopmat.glsl): out[t, r] = sum_k w[r, k] * x[t, k] (+ bias[r]) in 64-row x
// 64-token tiles, 16 sub-tiles of 16 x 16 for a work group of 256 invocations: 8 subgroups of 32 on NVIDIA (two
// sub-tiles, two 16 x 16 x 16 products per 16 columns each), 4 of 64 or 8 of 32 on AMD. 64 x 64 reads each
// dequantized weight for 64 tokens (twice matmul_tiled.comp's 32) while its three shared tiles stay near 32 KiB.
// Each step dequantizes a 64 x 32 slice of weights and converts a 64 x 32 slice of activations to f16; the sums
// go through shared memory to `out` with the bias.
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

const uint BM = 64u, BN = 64u;
#include "coopmat.glsl"

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint row0 = gl_WorkGroupID.x * BM;
    const uint tok0 = gl_WorkGroupID.y * BN;
    if (!coop_supported()) return;  // the host never picks this kernel for subgroups over 64 wide
    ACC_MAT acc0 = ACC_MAT(0.0), acc1 = ACC_MAT(0.0), acc2 = ACC_MAT(0.0), acc3 = ACC_MAT(0.0);

    for (uint k0 = 0u; k0 < p.cols; k0 += BK) {
        // Four neighbouring weights of one row per invocation, so that their block's scale is decoded once.
        for (uint i = tid; i < BM * BK / 4u; i += 256u) {
            const uint rr = i / (BK / 4u), kq = 4u * (i % (BK / 4u));
            const uint r = row0 + rr, c = k0 + kq;
            const uint row = p.w_off + r * p.w_stride;
            const uint block = row + (c / QK) * BLOCK_BYTES;
            // Block types only (cols a multiple of QK): no column bound needed.
            const vec4 v = r < p.rows ? dq4(block, c % QK) : vec4(0.0);
            for (uint m = 0u; m < 4u; ++m) coop_store_input(rr * KS + kq + m, v[m]);
        }
        for (uint i = tid; i < BN * BK; i += 256u) {
            const uint tt = i / BK, kk = i % BK;
            const uint t = tok0 + tt, c = k0 + kk;
            coop_store_activation(tt * KS + kk, (t < p.tokens && c < p.cols) ? x[p.x_off + t * p.x_stride + c] : 0.0);
        }
        barrier();
        COOP_MULTIPLY(acc0, coop_sub_tile(0u))
        COOP_MULTIPLY(acc1, coop_sub_tile(1u))
        COOP_MULTIPLY(acc2, coop_sub_tile(2u))
        COOP_MULTIPLY(acc3, coop_sub_tile(3u))
        barrier();
    }
    float sums[OUT_PER_INVOCATION];
    COOP_RESULTS(sums)
    for (uint j = 0u; j < OUT_PER_INVOCATION; ++j) {
        const uint i = tid + 256u * j;
        const uint r = row0 + i % BM, t = tok0 + i / BM;
        if (r < p.rows && t < p.tokens)
            out_f[p.out_off + t * p.out_stride + r] = sums[j] + (p.has_bias != 0u ? bias[p.bias_off + r] : 0.0);
    }
}
