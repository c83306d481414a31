// SPDX-License-Identifier: MIT
// Decode matrix x vector by integer dot products: the weights' 32-weight blocks (Q4_0, Q8_0, ROCmFP4 dual and
// fast, MXFP4) against activations quantized to Q8_1 by quantize_q8_1.comp (layout there), for up to 8 activation
// rows.
// Used where the device has shaderIntegerDotProduct; matvec_blocks.comp is the float kernel for the same types.
// Work layout as matvec_blocks.comp: row_lanes invocations per weight row, four per block; quarter q of a block is
// code bytes 4q..4q+3 = elements 4q..4q+3 (low nibbles) and 16+4q..16+4q+3 (high nibbles), for Q8_0 codes
// 8q..8q+7. Each invocation turns its quarter into two words of four int8 weights and takes their signed 4x8
// packed dot product (OpSDot, SPV_KHR_integer_dot_product) with the matching activation code words; the int32
// sum is then scaled once: Q4_0 and Q8_0 by d_w * d_x (Q4_0's nibbles are shifted to -8..7 before packing, so
// Q8_1's s is not needed), ROCmFP4 and MXFP4 by scale * d_x (ROCmFP4 dual: a scale for the low and one for the
// high nibbles; the codebook values with a sign are small integers: 0, 1, 2, 3, 4, 6, 8, 10 and MXFP4's doubled
// E2M1 0, 1, 2, 3, 4, 6, 8, 12 under half its scale).
// Push constants: those of matvec_blocks.comp, except that x_off is the word offset of activation row 0's codes
// and x_stride counts blocks between activation rows, plus x_scales (vec2 index of row 0's first (d, s)).
// GATED (matmul_gated / matmul_experts_gated): as in matvec_blocks.comp, binding 5 holds the up weights (row r at
// byte w_up_off + the gate row's offset from w_off), both products take the same activation code words, and the
// result is act(gate, up) (common.glsl's gated_act); no bias.
// EXPERTS: work group (x, y) takes its rows of slot y (binding 4 holds the ids). EXPERTS GROUPED (the verification
// of a few tokens): its rows of tile y of experts_group.comp's grouping (binding 4 holds that scratch): up to 8
// slots of one expert, so that the expert's rows are read once for all of them. Each slot's sum is accumulated and
// reduced by the same code in both, so a grouped slot's sum is the one-slot sum bit for bit.
#version 450
#extension GL_EXT_spirv_intrinsics : require
#include "common.glsl"
layout(local_size_x = 128) in;
layout(binding = 0) readonly buffer Weights { uint W[]; };
layout(binding = 1) readonly buffer XCodes { uint xq[]; };
layout(binding = 1) readonly buffer XScales { vec2 xd[]; };
layout(binding = 2) writeonly buffer Out { float out_f[]; };
layout(binding = 3) readonly buffer Bias { float bias[]; };
layout(binding = 4) readonly buffer Ids { int ids[]; };
layout(binding = 4) readonly buffer Groups { uint S[]; };
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
    uint x_vec4;  // unused here
    uint x_scales;
#if defined(GATED) || defined(EXPERTS)
    uint w_up_off;
    uint act;
#endif
#if defined(EXPERTS)
    uint grouped;
    uint offsets_off;  // experts_group.comp's layout
    uint tiles_off;
    uint list_off;
#endif
} p;

// OpSDot (opcode 4450) with PackedVectorFormat4x8Bit (0): the sum of the four products of signed bytes.
// Capabilities DotProductInput4x8BitPacked (6018) and DotProduct (6019).
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int sdot_4x8(uint a, uint b, spirv_literal int packed_format);
#define SDOT(a, b) sdot_4x8(a, b, 0)

#include "matvec_weights.glsl"

// Four nibbles (one in the low 4 bits of each byte) as four int8 values nibble - 8: per byte n + 0x78 stays below
// 0x100, and flipping bit 7 subtracts 0x80 modulo 256.
uint q4_to_i8x4(uint n) { return (n + 0x78787878u) ^ 0x80808080u; }

// Four FP4 codes (one in the low 4 bits of each byte) as four int8 codebook values. Magnitude m = code & 7 maps
// to m + max(m - 4, 0), which is m + (m & 3) when bit 2 is set; bit 3 is the sign. Negation per byte without a
// borrow into the next byte: (v | 0x80) - 2v = 0x80 - v (v <= 10), and flipping bit 7 subtracts 0x80.
uint fp4_to_i8x4(uint c) {
    const uint m = c & 0x07070707u;
    const uint v = m + (m & (((m >> 2) & 0x01010101u) * 3u));
    const uint negative = ((c >> 3) & 0x01010101u) * 0xffu;
    return ((v | 0x80808080u) - ((v + v) & negative)) ^ 0x80808080u;
}

// The same for MXFP4 (E2M1 doubled: 0, 1, 2, 3, 4, 6, 8, 12): magnitude 7 is 12, two more than above.
uint mxfp4_to_i8x4(uint c) {
    const uint m = c & 0x07070707u;
    const uint seven = m & (m >> 1) & (m >> 2) & 0x01010101u;
    const uint v = m + (m & (((m >> 2) & 0x01010101u) * 3u)) + seven * 2u;
    const uint negative = ((c >> 3) & 0x01010101u) * 0xffu;
    return ((v | 0x80808080u) - ((v + v) & negative)) ^ 0x80808080u;
}

// Quarter q of the block at byte b of matrix m as two words of four int8 weights (lo: the first run, hi: the
// second) and their scales (s_high differs from s_low for ROCmFP4 dual only).
void decode_quarter(uint m, uint b, uint q, out uint lo, out uint hi, out float s_low, out float s_high) {
#if defined(TYPE_Q8_0)
    s_low = half_bits_to_float(w_u16(m, b));
    lo = w_u32_2(m, b + 2u + 8u * q);
    hi = w_u32_2(m, b + 6u + 8u * q);
#elif defined(TYPE_Q4_0)
    s_low = half_bits_to_float(w_u16(m, b));
    const uint w = w_u32_2(m, b + 2u + 4u * q);
    lo = q4_to_i8x4(w & 0x0f0f0f0fu);
    hi = q4_to_i8x4((w >> 4) & 0x0f0f0f0fu);
#elif defined(TYPE_MXFP4)
    const uint w = word_at(m, b + 1u + 4u * q);
    s_low = mxfp4_half_scale(w_u8(m, b));
    lo = mxfp4_to_i8x4(w & 0x0f0f0f0fu);
    hi = mxfp4_to_i8x4((w >> 4) & 0x0f0f0f0fu);
#else
#if defined(TYPE_Q4_0_ROCMFP4)
    const uint w = w_u32_2(m, b + 4u * q);
    s_low = rocmfp_scale(w_u8(m, b + 16u));
#else
    const uint w = word_at(m, b + 4u * q);
    s_low = rocmfp_scale(w_u8(m, b + 16u));
#endif
    lo = fp4_to_i8x4(w & 0x0f0f0f0fu);
    hi = fp4_to_i8x4((w >> 4) & 0x0f0f0f0fu);
#endif
#if defined(TYPE_Q4_0_ROCMFP4)
    s_high = rocmfp_scale(w_u8(m, b + 17u));
#else
    s_high = s_low;
#endif
}

// The block's quarter against activation words a_lo, a_hi with activation scale d_x.
float quarter_dot(uint lo, uint hi, float s_low, float s_high, uint a_lo, uint a_hi, float d_x) {
#if defined(TYPE_Q4_0_ROCMFP4)
    return d_x * (s_low * float(SDOT(lo, a_lo)) + s_high * float(SDOT(hi, a_hi)));
#else
    return (s_low * d_x) * float(SDOT(lo, a_lo) + SDOT(hi, a_hi));
#endif
}

shared float partial[8][128];
shared uint tile_slots[8];  // EXPERTS GROUPED: the slots of this work group
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
    uint w_row, tokens;
    uint x_rows[8];  // the activation row of each token
#if defined(EXPERTS) && defined(GROUPED)
    const uint tile = gl_WorkGroupID.y;
    if (tile >= S[0]) return;  // the grid covers the most tiles the slots can make
    const uint entry = S[p.tiles_off + tile];
    const uint e = entry >> 16;
    const uint first = S[p.offsets_off + e] + (entry & 0xffffu) * 8u;
    tokens = min(8u, S[p.offsets_off + e + 1u] - first);
    if (tid < tokens) tile_slots[tid] = S[p.list_off + first + tid];
    barrier();
    valid = r < p.expert_rows;  // the grouping holds ids in 0..n_experts - 1 only
    w_row = p.w_off + (e * p.expert_rows + r) * p.w_stride;
    for (uint t = 0u; t < 8u; ++t)
        x_rows[t] = t < tokens ? (p.per_slot != 0u ? tile_slots[t] : tile_slots[t] / p.k) : 0u;
#elif defined(EXPERTS)
    const uint slot = gl_WorkGroupID.y;
    const int e = ids[p.ids_off + (slot / p.k) * p.ids_stride + slot % p.k];
    tokens = 1u;
    valid = r < p.expert_rows && e >= 0 && uint(e) * p.expert_rows < p.rows;
    w_row = p.w_off + (uint(max(e, 0)) * p.expert_rows + r) * p.w_stride;
    x_rows[0] = p.per_slot != 0u ? slot : slot / p.k;
#else
    valid = r < p.rows;
    w_row = p.w_off + r * p.w_stride;
    for (uint t = 0u; t < 8u; ++t) x_rows[t] = t;
    tokens = p.tokens;
#endif
    const uint n_blocks = p.cols / 32u;
    const uint q = li & 3u;
    const uint blocks_per_pass = lanes / 4u;
#if defined(TYPE_Q8_0)
    const uint word_lo = 2u * q, word_hi = 2u * q + 1u;
#else
    const uint word_lo = q, word_hi = q + 4u;
#endif
    float acc[8] = float[8](0, 0, 0, 0, 0, 0, 0, 0);
#if defined(GATED)
    float acc_up[8] = float[8](0, 0, 0, 0, 0, 0, 0, 0);
    const uint w_up_row = w_row - p.w_off + p.w_up_off;
#endif
    if (valid) {
        for (uint blk = li / 4u; blk < n_blocks; blk += blocks_per_pass) {
            uint lo, hi;
            float s_low, s_high;
            decode_quarter(0u, w_row + blk * BLOCK_BYTES, q, lo, hi, s_low, s_high);
#if defined(GATED)
            uint up_lo, up_hi;
            float up_s_low, up_s_high;
            decode_quarter(1u, w_up_row + blk * BLOCK_BYTES, q, up_lo, up_hi, up_s_low, up_s_high);
#endif
            for (uint t = 0u; t < 8u; ++t) {
                if (t < tokens) {
                    const uint xb = x_rows[t] * p.x_stride + blk;
                    const uint xw = p.x_off + xb * 8u;
                    const float d_x = xd[p.x_scales + xb].x;
                    const uint a_lo = xq[xw + word_lo], a_hi = xq[xw + word_hi];
                    acc[t] += quarter_dot(lo, hi, s_low, s_high, a_lo, a_hi, d_x);
#if defined(GATED)
                    acc_up[t] += quarter_dot(up_lo, up_hi, up_s_low, up_s_high, a_lo, a_hi, d_x);
#endif
                }
            }
        }
    }
    // Sum the row's lanes: within subgroups first when a subgroup never spans two rows, then in shared memory.
    const bool by_subgroup = gl_SubgroupSize <= lanes;
    for (uint t = 0u; t < 8u; ++t) {
        if (t < tokens) partial[t][tid] = by_subgroup ? subgroupAdd(acc[t]) : acc[t];
#if defined(GATED)
        if (t < tokens) partial_up[t][tid] = by_subgroup ? subgroupAdd(acc_up[t]) : acc_up[t];
#endif
    }
    barrier();
    const uint step0 = by_subgroup ? gl_SubgroupSize : 1u;
    for (uint stride = lanes / 2u; stride >= step0; stride >>= 1) {
        if (li < stride && (li % step0) == 0u) {
            for (uint t = 0u; t < 8u; ++t)
                if (t < tokens) partial[t][tid] += partial[t][tid + stride];
#if defined(GATED)
            for (uint t = 0u; t < 8u; ++t)
                if (t < tokens) partial_up[t][tid] += partial_up[t][tid + stride];
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
#if defined(EXPERTS) && defined(GROUPED)
        out_f[p.out_off + tile_slots[li] * p.out_stride + r] = s;
#elif defined(EXPERTS)
        out_f[p.out_off + slot * p.out_stride + r] = s;
#else
        out_f[p.out_off + li * p.out_stride + r] = s;
#endif
    }
}
