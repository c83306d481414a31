// SPDX-License-Identifier: MIT
// Weight i (0 <= i < QK) of the block that starts at byte b of the word array W, as ember::quant's reference
// dequantizer computes it: the same float operations in the same order, `precise` so that no FMA contraction
// changes a rounding (get_rows and convert are compared bit for bit). One TYPE_* macro picks the format; the
// includer defines W. QK is the block's weight count and BLOCK_BYTES its size.

#include "rocmfp.glsl"

// Nibble i of 16 bytes in Q4_0 order (weight j low nibble of byte j, weight j + 16 high nibble).
#define NIBBLE(qs, i) ((i) < 16u ? (RD8(W, (qs) + (i)) & 15u) : (RD8(W, (qs) + (i) - 16u) >> 4))
// `width` bits at bit `pos` of an LSB-first stream starting at byte s (width <= 8).
#define BITS(s, pos, width) \
    (((RD8(W, (s) + ((pos) >> 3)) | (RD8(W, (s) + ((pos) >> 3) + 1u) << 8)) >> ((pos) & 7u)) & ((1u << (width)) - 1u))
#define FP16_AT(off) half_bits_to_float(RD16(W, off))

#if defined(TYPE_F32)
#define QK 1u
#define BLOCK_BYTES 4u
float dq(uint b, uint i) { return uintBitsToFloat(W[b >> 2]); }
#elif defined(TYPE_F16)
#define QK 1u
#define BLOCK_BYTES 2u
float dq(uint b, uint i) { return FP16_AT(b); }
#elif defined(TYPE_BF16)
#define QK 1u
#define BLOCK_BYTES 2u
float dq(uint b, uint i) { return uintBitsToFloat(RD16(W, b) << 16); }
#elif defined(TYPE_Q4_0)
#define QK 32u
#define BLOCK_BYTES 18u
float dq(uint b, uint i) {
    precise float y = FP16_AT(b) * float(int(NIBBLE(b + 2u, i)) - 8);
    return y;
}
#define DQ4_DEFINED
vec4 dq4(uint b, uint i) {
    const float d = FP16_AT(b);
    precise vec4 y = d * vec4(int(NIBBLE(b + 2u, i)) - 8, int(NIBBLE(b + 2u, i + 1u)) - 8,
                              int(NIBBLE(b + 2u, i + 2u)) - 8, int(NIBBLE(b + 2u, i + 3u)) - 8);
    return y;
}
#elif defined(TYPE_Q4_1)
#define QK 32u
#define BLOCK_BYTES 20u
float dq(uint b, uint i) {
    precise float y = FP16_AT(b) * float(NIBBLE(b + 4u, i)) + FP16_AT(b + 2u);
    return y;
}
#elif defined(TYPE_Q5_0)
#define QK 32u
#define BLOCK_BYTES 22u
float dq(uint b, uint i) {
    const uint high = (RD32_2(W, b + 2u) >> i) & 1u;
    precise float y = FP16_AT(b) * float(int(NIBBLE(b + 6u, i) | (high << 4)) - 16);
    return y;
}
#elif defined(TYPE_Q5_1)
#define QK 32u
#define BLOCK_BYTES 24u
float dq(uint b, uint i) {
    const uint high = (RD32_2(W, b + 4u) >> i) & 1u;
    precise float y = FP16_AT(b) * float(NIBBLE(b + 8u, i) | (high << 4)) + FP16_AT(b + 2u);
    return y;
}
#elif defined(TYPE_Q8_0)
#define QK 32u
#define BLOCK_BYTES 34u
float dq(uint b, uint i) {
    precise float y = float(int(RD8(W, b + 2u + i) << 24) >> 24) * FP16_AT(b);
    return y;
}
#elif defined(TYPE_Q2_K)
#define QK 256u
#define BLOCK_BYTES 84u
float dq(uint b, uint i) {
    const uint h = i / 128u, j = (i % 128u) / 32u, l = i % 32u;
    const uint q = (RD8(W, b + 16u + 32u * h + l) >> (2u * j)) & 3u;
    const uint sc = RD8(W, b + i / 16u);
    precise float dl = FP16_AT(b + 80u) * float(sc & 15u);
    precise float ml = FP16_AT(b + 82u) * float(sc >> 4);
    precise float y = dl * float(q) - ml;
    return y;
}
#elif defined(TYPE_Q3_K)
#define QK 256u
#define BLOCK_BYTES 110u
float dq(uint b, uint i) {
    const uint h = i / 128u, j = (i % 128u) / 32u, l = i % 32u;
    const int low = int((RD8(W, b + 32u + 32u * h + l) >> (2u * j)) & 3u);
    const uint high = (RD8(W, b + l) >> (i / 32u)) & 1u;
    const uint s = i / 16u;
    const uint sc_low = s < 8u ? (RD8(W, b + 96u + s) & 15u) : (RD8(W, b + 96u + s - 8u) >> 4);
    const uint sc_high = (RD8(W, b + 96u + 8u + (s & 3u)) >> (2u * (s >> 2))) & 3u;
    precise float dl = FP16_AT(b + 108u) * float(int(sc_low | (sc_high << 4)) - 32);
    precise float y = dl * float(low - (high != 0u ? 0 : 4));
    return y;
}
#elif defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
#define QK 256u
#if defined(TYPE_Q4_K)
#define BLOCK_BYTES 144u
#define QS_AT 16u
#else
#define BLOCK_BYTES 176u
#define QS_AT 48u
#endif
void k4_scale_min(uint b, uint j, out uint sc, out uint m) {
    const uint s = b + 4u;
    if (j < 4u) {
        sc = RD8(W, s + j) & 63u;
        m = RD8(W, s + j + 4u) & 63u;
    } else {
        sc = (RD8(W, s + j + 4u) & 15u) | ((RD8(W, s + j - 4u) >> 6) << 4);
        m = (RD8(W, s + j + 4u) >> 4) | ((RD8(W, s + j) >> 6) << 4);
    }
}
float dq(uint b, uint i) {
    const uint s = i / 32u, l = i % 32u;
    uint sc, m;
    k4_scale_min(b, s, sc, m);
    uint q = (RD8(W, b + QS_AT + 32u * (s / 2u) + l) >> (4u * (s & 1u))) & 15u;
#if defined(TYPE_Q5_K)
    q |= ((RD8(W, b + 16u + l) >> s) & 1u) << 4;
#endif
    precise float d1 = FP16_AT(b) * float(sc);
    precise float m1 = FP16_AT(b + 2u) * float(m);
    precise float y = d1 * float(q) - m1;
    return y;
}
#elif defined(TYPE_Q6_K)
#define QK 256u
#define BLOCK_BYTES 210u
float dq(uint b, uint i) {
    const uint h = i / 128u, r = i % 128u;
    const uint low = (RD8(W, b + 64u * h + r % 64u) >> (4u * (r / 64u))) & 15u;
    const uint high = (RD8(W, b + 128u + 32u * h + r % 32u) >> (2u * (r / 32u))) & 3u;
    const int scale = int(RD8(W, b + 192u + i / 16u) << 24) >> 24;
    precise float dl = FP16_AT(b + 208u) * float(scale);
    precise float y = dl * float(int(low | (high << 4)) - 32);
    return y;
}
#elif defined(TYPE_MXFP4)
#define QK 32u
#define BLOCK_BYTES 17u
float dq(uint b, uint i) {
    precise float y = mxfp4_half_scale(RD8(W, b)) * float(mxfp4_value(NIBBLE(b + 1u, i)));
    return y;
}
#elif defined(TYPE_Q4_0_ROCMFP4) || defined(TYPE_Q4_0_ROCMFP4_FAST)
#define QK 32u
#if defined(TYPE_Q4_0_ROCMFP4)
#define BLOCK_BYTES 18u
// Dual scale: byte 16 scales weights 0-15, byte 17 weights 16-31.
uint rocmfp4_scale_byte(uint b, uint i) { return b + 16u + i / 16u; }
#else
#define BLOCK_BYTES 17u
uint rocmfp4_scale_byte(uint b, uint i) { return b + 16u; }
#endif
float dq(uint b, uint i) {
    precise float y = float(rocmfp4_value(NIBBLE(b, i))) * rocmfp_scale(RD8(W, rocmfp4_scale_byte(b, i)));
    return y;
}
#define DQ4_DEFINED
vec4 dq4(uint b, uint i) {
    const float s = rocmfp_scale(RD8(W, rocmfp4_scale_byte(b, i)));
    precise vec4 y = vec4(rocmfp4_value(NIBBLE(b, i)), rocmfp4_value(NIBBLE(b, i + 1u)),
                          rocmfp4_value(NIBBLE(b, i + 2u)), rocmfp4_value(NIBBLE(b, i + 3u))) * s;
    return y;
}
#elif defined(TYPE_Q6_0_ROCMFPX)
#define QK 32u
#define BLOCK_BYTES 26u
float dq(uint b, uint i) {
    const uint code = BITS(b, 6u * i, 6u);
    const int magnitude = int(code & 31u);
    const int v = (code & 32u) == 0u ? magnitude : (magnitude == 0 ? -32 : -magnitude);
    precise float y = float(v) * rocmfp_scale(RD8(W, b + 24u + i / 16u));
    return y;
}
#elif defined(TYPE_Q8_0_ROCMFPX)
#define QK 32u
#define BLOCK_BYTES 33u
float dq(uint b, uint i) {
    precise float y = float(int(RD8(W, b + i) << 24) >> 24) * rocmfp_scale(RD8(W, b + 32u));
    return y;
}
#elif defined(TYPE_Q3_0_ROCMFPX)
#define QK 32u
#define BLOCK_BYTES 14u
float dq(uint b, uint i) {
    precise float y = float(rocmfp3_value(BITS(b, 3u * i, 3u))) * rocmfp_scale(RD8(W, b + 12u + i / 16u));
    return y;
}
#else
#error "no TYPE_* defined"
#endif

// Element k of the row that starts at byte `row`.
float dq_elem(uint row, uint k) { return dq(row + (k / QK) * BLOCK_BYTES, k % QK); }
// Weights i .. i + 3 of a block (i a multiple of 4, QK > 1), each equal to dq's: the block's scale is decoded once.
#ifndef DQ4_DEFINED
vec4 dq4(uint b, uint i) { return vec4(dq(b, i), dq(b, i + 1u), dq(b, i + 2u), dq(b, i + 3u)); }
#endif
