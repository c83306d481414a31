// SPDX-License-Identifier: MIT
// Quantized weight formats: for every tensor type Ember computes with, the block layout, a reference dequantizer
// (block -> float), a reference quantizer (float -> block) and a row validator. These definitions are what every
// kernel (CPU, Vulkan, HIP) is tested against; they favour exactness over speed.
//
// Types: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K (the activation type of
// the K-quant kernels), MXFP4, and the ROCmFP4 family of ../shared/specs/rocmfp4.md: Q4_0_ROCMFP4 (dual scale),
// Q4_0_ROCMFP4_FAST, Q6_0_ROCMFPX (FP6), Q8_0_ROCMFPX (FP8), Q3_0_ROCMFPX (FP3).
//
// This module never allocates in the row functions, never reads or writes outside the row it is given, and decodes
// any byte pattern without crashing: a bad scale byte is found by validate_row, never by a crash elsewhere.
// Bad arguments (an unknown type, a length that is not a multiple of the block size) throw ember::Error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ember/error.h"
#include "ember/gguf.h"
#include "ember/quantize.h"

namespace ember::quant {

using gguf::TensorType;

// can_quantize and can_dequantize: ember/quantize.h.

// n must be a multiple of the type's block size; throws ember::Error otherwise.
void dequantize_row(TensorType type, const void* src, float* dst, int64_t n);
// Quantizes one row of n weights. `imatrix` (n importance weights, or nullptr) steers the error the quantizer
// minimises; it is used by the ROCmFP4/ROCmFPX family (spec §4.3) and the K-quants, and ignored by the types whose
// reference quantizer is fixed (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_K, MXFP4).
void quantize_row(TensorType type, const float* src, void* dst, int64_t n, const float* imatrix = nullptr);
// Checks a row of n weights: scale bytes in range (ROCmFP4 family: <= 0x7E; MXFP4: not 0xFF), fp16/fp32 scales
// and float weights finite. Throws ember::Error "block 17: scale byte 0x80 > 0x7E" style messages; the caller
// prefixes the file, tensor and row.
void validate_row(TensorType type, const void* src, int64_t n);

// ---------------------------------------------------------------------------------------------------------------
// fp16 / bf16 <-> fp32. Conversions to 16 bits round to nearest, ties to even; NaN stays NaN.

inline uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

inline float bits_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

inline float fp16_to_fp32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
    const uint32_t exponent = (h >> 10) & 0x1f;
    const uint32_t mantissa = h & 0x3ff;
    if (exponent == 0x1f) return bits_float(sign | 0x7f800000 | (mantissa << 13));
    if (exponent == 0) {
        const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;  // exact: at most 10 significant bits
        return sign ? -magnitude : magnitude;
    }
    return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

inline uint16_t fp32_to_fp16(float f) {
    const uint32_t x = float_bits(f);
    const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000);
    const uint32_t ax = x & 0x7fffffff;
    if (ax > 0x7f800000) return sign | 0x7e00 | ((ax >> 13) & 0x3ff);  // NaN, kept quiet
    if (ax >= 0x477ff000) return sign | 0x7c00;                         // 65520 and up round to infinity
    if (ax >= 0x38800000) {                                             // a normal half
        const uint32_t rebiased = ax - 0x38000000;
        return static_cast<uint16_t>(sign | ((rebiased + 0xfff + ((rebiased >> 13) & 1)) >> 13));
    }
    const uint32_t exponent = ax >> 23;  // a subnormal half (or zero): units of 2^-24
    if (exponent < 102) return sign;
    const uint32_t mantissa = (ax & 0x7fffff) | 0x800000;
    const uint32_t shift = 126 - exponent;
    uint32_t q = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (q & 1))) ++q;
    return static_cast<uint16_t>(sign | q);
}

inline float bf16_to_fp32(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

inline uint16_t fp32_to_bf16(float f) {
    const uint32_t x = float_bits(f);
    if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);  // NaN, kept quiet
    return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

// ---------------------------------------------------------------------------------------------------------------
// Block layouts, byte for byte as stored in GGUF. Every field is a byte array so that blocks may sit at any address
// (ROCmFP4 blocks are 17 and 18 bytes); multi-byte fields are little-endian, read with the helpers below.

namespace block {

constexpr int qk = 32;    // weights per block of the 32-weight types
constexpr int qk_k = 256; // weights per K-quant super-block

// Q4_0: weight j in the low nibble of qs[j], weight j+16 in the high nibble; y = d * (q - 8).
struct Q4_0 { uint8_t d[2]; uint8_t qs[16]; };
// Q4_1: y = d * q + m.
struct Q4_1 { uint8_t d[2]; uint8_t m[2]; uint8_t qs[16]; };
// Q5_0: low 4 bits as Q4_0, bit 4 of weight i is bit i of qh (little-endian u32); y = d * (q - 16).
struct Q5_0 { uint8_t d[2]; uint8_t qh[4]; uint8_t qs[16]; };
// Q5_1: y = d * q + m.
struct Q5_1 { uint8_t d[2]; uint8_t m[2]; uint8_t qh[4]; uint8_t qs[16]; };
// Q8_0: y = d * q.
struct Q8_0 { uint8_t d[2]; int8_t qs[32]; };
// MXFP4: E8M0 scale, then nibbles in Q4_0 order; y = kMxfp4Values[q] * 2^(e - 128).
struct MXFP4 { uint8_t e; uint8_t qs[16]; };
// Q2_K: 16 sub-blocks of 16; scales[k] = scale | min << 4; y = d * scale * q - dmin * min, q in 0..3.
struct Q2_K { uint8_t scales[16]; uint8_t qs[64]; uint8_t d[2]; uint8_t dmin[2]; };
// Q3_K: 16 sub-blocks of 16 with 6-bit signed scales (packed, see q3_k_scale); q in -4..3.
struct Q3_K { uint8_t hmask[32]; uint8_t qs[64]; uint8_t scales[12]; uint8_t d[2]; };
// Q4_K: 8 sub-blocks of 32 with 6-bit scales and mins (packed, see k4_scale_min); q in 0..15.
struct Q4_K { uint8_t d[2]; uint8_t dmin[2]; uint8_t scales[12]; uint8_t qs[128]; };
// Q5_K: as Q4_K plus a fifth bit per weight in qh; q in 0..31.
struct Q5_K { uint8_t d[2]; uint8_t dmin[2]; uint8_t scales[12]; uint8_t qh[32]; uint8_t qs[128]; };
// Q6_K: 16 sub-blocks of 16 with int8 scales; q in -32..31.
struct Q6_K { uint8_t ql[128]; uint8_t qh[64]; int8_t scales[16]; uint8_t d[2]; };
// Q8_K: fp32 d, y = d * q; bsums[k] (int16) = sum of qs[16k .. 16k+15].
struct Q8_K { uint8_t d[4]; int8_t qs[256]; uint8_t bsums[32]; };
// ROCmFP4 dual scale: nibbles in Q4_0 order, e[0] scales weights 0-15, e[1] weights 16-31 (spec §2).
struct Q4_0_ROCMFP4 { uint8_t qs[16]; uint8_t e[2]; };
// ROCmFP4 FAST: one scale for all 32 weights.
struct Q4_0_ROCMFP4_FAST { uint8_t qs[16]; uint8_t e; };
// FP6: 6-bit codes, LSB-first bit stream (weight i at bit 6i); e[0] for weights 0-15, e[1] for 16-31 (spec §5).
struct Q6_0_ROCMFPX { uint8_t qs[24]; uint8_t e[2]; };
// FP8: int8 codes, one scale.
struct Q8_0_ROCMFPX { int8_t qs[32]; uint8_t e; };
// FP3: 3-bit codes, LSB-first bit stream (weight i at bit 3i); e[0] for weights 0-15, e[1] for 16-31.
struct Q3_0_ROCMFPX { uint8_t qs[12]; uint8_t e[2]; };

static_assert(sizeof(Q4_0) == 18 && sizeof(Q4_1) == 20 && sizeof(Q5_0) == 22 && sizeof(Q5_1) == 24);
static_assert(sizeof(Q8_0) == 34 && sizeof(MXFP4) == 17);
static_assert(sizeof(Q2_K) == 84 && sizeof(Q3_K) == 110 && sizeof(Q4_K) == 144 && sizeof(Q5_K) == 176);
static_assert(sizeof(Q6_K) == 210 && sizeof(Q8_K) == 292);
static_assert(sizeof(Q4_0_ROCMFP4) == 18 && sizeof(Q4_0_ROCMFP4_FAST) == 17 && sizeof(Q6_0_ROCMFPX) == 26);
static_assert(sizeof(Q8_0_ROCMFPX) == 33 && sizeof(Q3_0_ROCMFPX) == 14);

}  // namespace block

inline uint16_t load_u16(const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline float load_fp16(const uint8_t* p) { return fp16_to_fp32(load_u16(p)); }
inline void store_fp16(uint8_t* p, float f) {
    const uint16_t h = fp32_to_fp16(f);
    std::memcpy(p, &h, sizeof h);
}
inline float load_f32(const uint8_t* p) {
    float v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// ---------------------------------------------------------------------------------------------------------------
// Scale and code tables shared by the reference code and the kernels.

// ROCmFP4/ROCmFPX scale byte, UE4M3 "half scale" (spec §2.2): 0 for 0x7F and for bytes >= 0x80.
constexpr float rocmfp_scale(uint8_t e) {
    if (e >= 0x7f) return 0.0f;
    const int exponent = (e >> 3) & 15;
    const int mantissa = e & 7;
    if (exponent == 0) return static_cast<float>(mantissa) / 1024.0f;
    float s = static_cast<float>(8 + mantissa);
    for (int i = 0; i < exponent; ++i) s *= 2.0f;
    return s / 2048.0f;  // (8 + M) * 2^(E - 11)
}
constexpr uint8_t kRocmfpMaxScaleByte = 0x7e;

// Codebook10 (spec §2.1): codes 8-15 are the negatives of 0-7; code 8 decodes to 0.
constexpr int8_t kRocmfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 10, 0, -1, -2, -3, -4, -6, -8, -10};
// FP3 (spec §5): bit 2 is the sign, magnitudes {0, 1, 2, 4}.
constexpr int8_t kRocmfp3Values[8] = {0, 1, 2, 4, 0, -1, -2, -4};
// FP6 (spec §5): bit 5 is the sign, bits 0-4 the magnitude; "sign set, magnitude 0" is -32.
constexpr int rocmfp6_value(uint32_t code) {
    const int magnitude = static_cast<int>(code & 31);
    if (!(code & 32)) return magnitude;
    return magnitude == 0 ? -32 : -magnitude;
}

// MXFP4: E2M1 values doubled; the E8M0 scale is halved to match (2^(e-127) / 2).
constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
inline float mxfp4_scale(uint8_t e) {
    return bits_float(e < 2 ? (0x00200000u << e) : (static_cast<uint32_t>(e - 1) << 23));
}

// Q4_K/Q5_K: the 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes.
inline void k4_scale_min(const uint8_t* scales, int j, uint8_t& scale, uint8_t& min) {
    if (j < 4) {
        scale = scales[j] & 63;
        min = scales[j + 4] & 63;
    } else {
        scale = static_cast<uint8_t>((scales[j + 4] & 0x0f) | ((scales[j - 4] >> 6) << 4));
        min = static_cast<uint8_t>((scales[j + 4] >> 4) | ((scales[j] >> 6) << 4));
    }
}

// Q3_K: the signed scale (-32..31) of sub-block j (0..15) from the 12 packed bytes.
inline int q3_k_scale(const uint8_t* scales, int j) {
    const int low = j < 8 ? (scales[j] & 0x0f) : (scales[j - 8] >> 4);
    const int high = (scales[8 + (j & 3)] >> (2 * (j >> 2))) & 3;
    return (low | (high << 4)) - 32;
}

}  // namespace ember::quant
