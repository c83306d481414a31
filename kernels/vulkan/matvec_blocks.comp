// SPDX-License-Identifier: MIT
// Decode matrix x vector for the 32-weight block types that dominate the models (Q4_0, Q8_0, ROCmFP4 dual and
// fast, MXFP4), for up to 8 activation rows at once (the weights are read once for all of them).
// A work group of 128 invocations takes 128 / row_lanes weight rows; the row_lanes invocations of a row take its
// blocks four invocations to a block, so that neighbouring invocations read neighbouring weight words and
// activation vectors (memory accesses of a subgroup coalesce; one invocation striding over a whole block of
// activations does not, and that made this kernel L1-bound). Quarter q of a block is the 4 code bytes q*4..q*4+3:
// elements 4q..4q+3 (low nibbles) and 16+4q..16+4q+3 (high nibbles); for Q8_0 the 8 codes 8q..8q+7.
// Same parameters as matvec.comp, plus row_lanes (a power of two, 4..128) and x_vec4 (activations 16-byte
// aligned: read as vec4).
// GATED (matmul_gated / matmul_experts_gated): binding 5 holds the up weights (same type and row layout, row r at
// byte w_up_off + the gate row's offset from w_off); each row's lanes take the gate and the up product from the
// same activation reads and write act(gate, up) (common.glsl's gated_act); no bias.
#version 450
#include "common.glsl"
layout(local_size_x = 128) in;
layout(binding = 0) readonly buffer Weights { uint W[]; };
layout(binding = 1) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer X4 { vec4 x4[]; };
layout(binding = 2) writeonly buffer Out { float out_f[]; };
layout(binding = 3) readonly buffer Bias { float bias[]; };
layout(binding = 4) readonly buffer Ids { int ids[]; };
#if defined(GATED)
layout(binding = 5) readonly buffer WeightsUp { uint W_up[]; };
#endif

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
    uint ids_off;
    uint ids_stride;
    uint k;
    uint expert_rows;
    uint per_slot;
    uint row_lanes;
    uint x_vec4;
#if defined(GATED)
    uint x_scales;  // unused here
    uint w_up_off;
    uint act;
#endif
} p;

#include "matvec_weights.glsl"

// Activations i..i+3 of one row (i a multiple of 4).
vec4 x_quad(uint base, uint i) {
    if (p.x_vec4 != 0u) return x4[(base + i) >> 2];
    return vec4(x[base + i], x[base + i + 1u], x[base + i + 2u], x[base + i + 3u]);
}

// The weights of quarter q of the block at byte b of matrix m, scaled: lo = elements of the first run, hi = of the
// second.
void decode_quarter(uint m, uint b, uint q, out vec4 lo, out vec4 hi) {
#if defined(TYPE_Q8_0)
    const float d = half_bits_to_float(w_u16(m, b));
    const uint w0 = w_u32_2(m, b + 2u + 8u * q), w1 = w_u32_2(m, b + 6u + 8u * q);
    lo = d * vec4(float(int(w0 << 24) >> 24), float(int(w0 << 16) >> 24), float(int(w0 << 8) >> 24),
                  float(int(w0) >> 24));
    hi = d * vec4(float(int(w1 << 24) >> 24), float(int(w1 << 16) >> 24), float(int(w1 << 8) >> 24),
                  float(int(w1) >> 24));
#elif defined(TYPE_Q4_0)
    const float d = half_bits_to_float(w_u16(m, b));
    const uint w = w_u32_2(m, b + 2u + 4u * q);
    lo = d * (vec4(float(w & 15u), float((w >> 8) & 15u), float((w >> 16) & 15u), float((w >> 24) & 15u)) - 8.0);
    hi = d * (vec4(float((w >> 4) & 15u), float((w >> 12) & 15u), float((w >> 20) & 15u), float(w >> 28)) - 8.0);
#elif defined(TYPE_MXFP4)
    const uint w = word_at(m, b + 1u + 4u * q);
    const float d = mxfp4_half_scale(w_u8(m, b));
    lo = d * vec4(mxfp4_value(w & 15u), mxfp4_value((w >> 8) & 15u), mxfp4_value((w >> 16) & 15u),
                  mxfp4_value((w >> 24) & 15u));
    hi = d * vec4(mxfp4_value((w >> 4) & 15u), mxfp4_value((w >> 12) & 15u), mxfp4_value((w >> 20) & 15u),
                  mxfp4_value(w >> 28));
#else
#if defined(TYPE_Q4_0_ROCMFP4)
    const uint w = w_u32_2(m, b + 4u * q);
    const float s_low = rocmfp_scale(w_u8(m, b + 16u)), s_high = rocmfp_scale(w_u8(m, b + 17u));
#else
    const uint w = word_at(m, b + 4u * q);
    const float s_low = rocmfp_scale(w_u8(m, b + 16u)), s_high = s_low;
#endif
    lo = s_low * vec4(rocmfp4_float(w), rocmfp4_float(w >> 8), rocmfp4_float(w >> 16), rocmfp4_float(w >> 24));
    hi = s_high * vec4(rocmfp4_float(w >> 4), rocmfp4_float(w >> 12), rocmfp4_float(w >> 20), rocmfp4_float(w >> 28));
#endif
}

shared float partial[8][128];
#if defined(GATED)
shared float partial_up[8][128];
#endif

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint lanes = p.row_lanes;
    const uint li = tid & (lanes - 1u);
    const uint rows_per_group = 128u / lanes;
#if defined(EXPERTS)
    const uint r = gl_WorkGroupID.x * rows_per_group + tid / lanes;
#else
    const uint r = linear_group() * rows_per_group + tid / lanes;
#endif
    bool valid;
    uint w_row, x_base, out_base, tokens;
#if defined(EXPERTS)
    const uint slot = gl_WorkGroupID.y;
    const int e = ids[p.ids_off + (slot / p.k) * p.ids_stride + slot % p.k];
    valid = r < p.expert_rows && e >= 0 && uint(e) * p.expert_rows < p.rows;
    w_row = p.w_off + (uint(max(e, 0)) * p.expert_rows + r) * p.w_stride;
    x_base = p.x_off + (p.per_slot != 0u ? slot : slot / p.k) * p.x_stride;
    out_base = p.out_off + slot * p.out_stride;
    tokens = 1u;
#else
    valid = r < p.rows;
    w_row = p.w_off + r * p.w_stride;
    x_base = p.x_off;
    out_base = p.out_off;
    tokens = p.tokens;
#endif
    const uint n_blocks = p.cols / 32u;
    const uint q = li & 3u;
    const uint blocks_per_pass = lanes / 4u;
    float acc[8] = float[8](0, 0, 0, 0, 0, 0, 0, 0);
#if defined(GATED)
    float acc_up[8] = float[8](0, 0, 0, 0, 0, 0, 0, 0);
    const uint w_up_row = w_row - p.w_off + p.w_up_off;
#endif
    if (valid) {
        for (uint blk = li / 4u; blk < n_blocks; blk += blocks_per_pass) {
            vec4 lo, hi;
            decode_quarter(0u, w_row + blk * BLOCK_BYTES, q, lo, hi);
#if defined(GATED)
            vec4 up_lo, up_hi;
            decode_quarter(1u, w_up_row + blk * BLOCK_BYTES, q, up_lo, up_hi);
#endif
#if defined(TYPE_Q8_0)
            const uint i_lo = blk * 32u + 8u * q, i_hi = i_lo + 4u;
#else
            const uint i_lo = blk * 32u + 4u * q, i_hi = i_lo + 16u;
#endif
            for (uint t = 0u; t < 8u; ++t) {
                if (t < tokens) {
                    const uint xb = x_base + t * p.x_stride;
                    const vec4 x_lo = x_quad(xb, i_lo), x_hi = x_quad(xb, i_hi);
                    acc[t] += dot(lo, x_lo) + dot(hi, x_hi);
#if defined(GATED)
                    acc_up[t] += dot(up_lo, x_lo) + dot(up_hi, x_hi);
#endif
                }
            }
        }
    }
    // Sum the row's lanes: within subgroups first when a subgroup never spans two rows, then in shared memory.
    const bool by_subgroup = gl_SubgroupSize <= lanes;
    for (uint t = 0u; t < 8u; ++t) {
        if (t < p.tokens) partial[t][tid] = by_subgroup ? subgroupAdd(acc[t]) : acc[t];
#if defined(GATED)
        if (t < p.tokens) partial_up[t][tid] = by_subgroup ? subgroupAdd(acc_up[t]) : acc_up[t];
#endif
    }
    barrier();
    const uint step0 = by_subgroup ? gl_SubgroupSize : 1u;
    for (uint stride = lanes / 2u; stride >= step0; stride >>= 1) {
        if (li < stride && (li % step0) == 0u) {
            for (uint t = 0u; t < 8u; ++t)
                if (t < p.tokens) partial[t][tid] += partial[t][tid + stride];
#if defined(GATED)
            for (uint t = 0u; t < 8u; ++t)
                if (t < p.tokens) partial_up[t][tid] += partial_up[t][tid + stride];
#endif
        }
        barrier();
    }
    if (valid && li < tokens) {
        float s = partial[li][tid - li];
#if defined(GATED)
        s = gated_act(p.act, s, partial_up[li][tid - li]);
#else
        if (p.has_bias != 0u) s += bias[p.bias_off + r];
#endif
        out_f[out_base + li * p.out_stride + r] = s;
    }
}
