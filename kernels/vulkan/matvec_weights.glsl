// SPDX-License-Identifier: MIT
// Weight access of the block mat x vec kernels (matvec_blocks.comp, matvec_dot.comp): block sizes, and bytes and
// words of matrix m (0: W, the gate's weights when GATED; 1: W_up), which the includer declares with p (the push
// constants: act when GATED, common.glsl's gated_act code).
#include "rocmfp.glsl"

#if defined(TYPE_Q4_0)
#define BLOCK_BYTES 18u
#elif defined(TYPE_Q8_0)
#define BLOCK_BYTES 34u
#elif defined(TYPE_Q4_0_ROCMFP4)
#define BLOCK_BYTES 18u
#else
#define BLOCK_BYTES 17u
#endif

// Word i of weight matrix m: 0 the weights (the gate's when GATED), 1 the up weights.
uint w_word(uint m, uint i) {
#if defined(GATED)
    if (m != 0u) return W_up[i];
#endif
    return W[i];
}
uint w_u8(uint m, uint o) { return (w_word(m, o >> 2) >> ((o & 3u) * 8u)) & 0xffu; }
uint w_u16(uint m, uint o) { return (w_word(m, o >> 2) >> ((o & 2u) * 8u)) & 0xffffu; }
// Little-endian 32 bits at an offset that is a multiple of 2.
uint w_u32_2(uint m, uint o) {
    return (o & 2u) == 0u ? w_word(m, o >> 2) : (w_word(m, o >> 2) >> 16) | (w_word(m, (o >> 2) + 1u) << 16);
}

// 32 bits at any byte offset.
uint word_at(uint m, uint o) {
    const uint s = 8u * (o & 3u);
    const uint lo = w_word(m, o >> 2);
    return s == 0u ? lo : (lo >> s) | (w_word(m, (o >> 2) + 1u) << (32u - s));
}
