// SPDX-License-Identifier: MIT
// The ROCmFP and MXFP4 scale bytes and the FP4/FP3 codebooks (../shared/specs/rocmfp4.md), for the dequantizers
// and the mat x vec kernels alike.
#ifndef EMBER_ROCMFP_GLSL
#define EMBER_ROCMFP_GLSL
float rocmfp_scale(uint e) {
    if (e >= 0x7fu) return 0.0;
    const int exponent = int((e >> 3) & 15u);
    const uint mantissa = e & 7u;
    if (exponent == 0) return float(mantissa) * (1.0 / 1024.0);
    // (8 + m) * 2^(exponent - 11), with the power of two built from its bits (exact; ldexp is a call on some GPUs).
    return float(8u + mantissa) * uintBitsToFloat(uint(exponent + 116) << 23);
}

// Codebooks as sign-magnitude codes whose magnitudes are nibbles of one constant, not as arrays: a constant array
// indexed by data is a memory lookup on some GPUs (NVIDIA: the constant bank, serialized when a warp's indices
// differ), which made the FP4 dequantizers the slowest of all.
//   ROCmFP4 (codebook10): 0 1 2 3 4 6 8 10, sign in bit 3; MXFP4 (E2M1 doubled): 0 1 2 3 4 6 8 12; ROCmFP3: 0 1 2 4,
//   sign in bit 2.
int signed_nibble_code(uint code, uint magnitudes, uint sign_bit) {
    const int m = int((magnitudes >> (4u * (code & (sign_bit - 1u)))) & 15u);
    return (code & sign_bit) != 0u ? -m : m;
}
int rocmfp4_value(uint code) { return signed_nibble_code(code, 0xA8643210u, 8u); }
int mxfp4_value(uint code) { return signed_nibble_code(code, 0xC8643210u, 8u); }
int rocmfp3_value(uint code) { return signed_nibble_code(code, 0x4210u, 4u); }
float rocmfp4_float(uint code) { return float(rocmfp4_value(code)); }
// MXFP4's E8M0 scale byte halved (its codes are the doubled E2M1 values above): 2^(e - 128), subnormal for e < 2.
float mxfp4_half_scale(uint e) { return uintBitsToFloat(e < 2u ? (0x00200000u << e) : ((e - 1u) << 23)); }
#endif
