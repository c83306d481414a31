// SPDX-License-Identifier: MIT
// Device decoders of every weight type the backend computes with, in GGUF's block layouts (engine/quant is the
// reference; ../shared/specs/rocmfp4.md for ids 100-104). decode32<T> turns weights [32c, 32c + 32) of a row into
// floats, bit-exactly as quant::dequantize_row does: every float step is written so the compiler cannot fuse it
// into a multiply-add, since get_rows must return the reference's bits. encode_q8_0_block is the one encoder, shared
// by the KV-cache writes and the row copies.
#pragma once

#include "gpu_device.cuh"
#include "kernels.h"

namespace ember::gpu_kernels {

using gpu::half_to_float;
using gpu::load_u16;

// Codebooks and scale tables (rocmfp4.md §2.1, §2.2; MXFP4 doubled E2M1).
static __constant__ int8_t kRocmfp4Codebook[16] = {0, 1, 2, 3, 4, 6, 8, 10, 0, -1, -2, -3, -4, -6, -8, -10};
static __constant__ int8_t kMxfp4Codebook[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
static __constant__ int8_t kRocmfp3Codebook[8] = {0, 1, 2, 4, 0, -1, -2, -4};

// UE4M3 half scale: 0 for 0x7F and bytes >= 0x80.
__device__ __forceinline__ float rocmfp_scale(uint8_t e) {
    if (e >= 0x7f) return 0.0f;
    const int exponent = (e >> 3) & 15, mantissa = e & 7;
    if (exponent == 0) return static_cast<float>(mantissa) * (1.0f / 1024.0f);
    return __uint_as_float(static_cast<uint32_t>(exponent + 119) << 23 | static_cast<uint32_t>(mantissa) << 20);
}

__device__ __forceinline__ float mxfp4_scale(uint8_t e) {
    return __uint_as_float(e < 2 ? (0x00200000u << e) : (static_cast<uint32_t>(e - 1) << 23));
}

// a * b + c rounded twice, never fused (the reference is built with -ffp-contract=off).
__device__ __forceinline__ float mul_add_unfused(float a, float b, float c) {
#if defined(EMBER_GPU_CUDA)
    return __fadd_rn(__fmul_rn(a, b), c);
#else
#pragma clang fp contract(off)
    return a * b + c;
#endif
}
__device__ __forceinline__ float mul_sub_unfused(float a, float b, float c) {
#if defined(EMBER_GPU_CUDA)
    return __fsub_rn(__fmul_rn(a, b), c);
#else
#pragma clang fp contract(off)
    return a * b - c;
#endif
}

// Bits [pos, pos + width) of an LSB-first bit stream (width <= 8).
__device__ __forceinline__ uint32_t stream_bits(const uint8_t* s, int pos, int width) {
    const int byte = pos >> 3, shift = pos & 7;
    const uint32_t two = s[byte] | (shift + width > 8 ? static_cast<uint32_t>(s[byte + 1]) << 8 : 0u);
    return (two >> shift) & ((1u << width) - 1);
}

__device__ __forceinline__ int rocmfp6_value(uint32_t code) {
    const int magnitude = static_cast<int>(code & 31);
    if (!(code & 32)) return magnitude;
    return magnitude == 0 ? -32 : -magnitude;
}

// Low nibble of qs[i] for i < 16, high nibble of qs[i - 16] above (Q4_0 order).
__device__ __forceinline__ int split_nibble(const uint8_t* qs, int i) {
    return i < 16 ? (qs[i] & 0x0f) : (qs[i - 16] >> 4);
}

// The types whose weights are plain floats, one per column, and column c of such a row as a float.
template <int T>
inline constexpr bool kFloatWeights = T == kF32 || T == kF16 || T == kBF16;

template <int T>
__device__ __forceinline__ float float_weight(const uint8_t* row, int64_t c) {
    if constexpr (T == kF32) {
        return reinterpret_cast<const float*>(row)[c];
    } else {
        const uint16_t v = reinterpret_cast<const uint16_t*>(row)[c];
        return T == kF16 ? half_to_float(v) : gpu::bf16_to_float(v);
    }
}

template <int T>
__device__ __forceinline__ void decode32(const uint8_t* row, int64_t c, float (&w)[32]) {
    if constexpr (kFloatWeights<T>) {
#pragma unroll
        for (int i = 0; i < 32; ++i) w[i] = float_weight<T>(row, 32 * c + i);
    } else if constexpr (T == kQ4_0) {
        const uint8_t* b = row + 18 * c;
        const float d = half_to_float(load_u16(b));
#pragma unroll
        for (int i = 0; i < 32; ++i) w[i] = d * static_cast<float>(split_nibble(b + 2, i) - 8);
    } else if constexpr (T == kQ4_1) {
        const uint8_t* b = row + 20 * c;
        const float d = half_to_float(load_u16(b)), m = half_to_float(load_u16(b + 2));
#pragma unroll
        for (int i = 0; i < 32; ++i) w[i] = mul_add_unfused(d, static_cast<float>(split_nibble(b + 4, i)), m);
    } else if constexpr (T == kQ5_0 || T == kQ5_1) {
        const uint8_t* b = row + (T == kQ5_0 ? 22 : 24) * c;
        const float d = half_to_float(load_u16(b));
        const uint8_t* qh = b + (T == kQ5_0 ? 2 : 4);
        const uint32_t high = qh[0] | qh[1] << 8 | qh[2] << 16 | static_cast<uint32_t>(qh[3]) << 24;
        const uint8_t* qs = qh + 4;
        if constexpr (T == kQ5_0) {
#pragma unroll
            for (int i = 0; i < 32; ++i) {
                const int q = split_nibble(qs, i) | static_cast<int>(((high >> i) & 1) << 4);
                w[i] = d * static_cast<float>(q - 16);
            }
        } else {
            const float m = half_to_float(load_u16(b + 2));
#pragma unroll
            for (int i = 0; i < 32; ++i) {
                const int q = split_nibble(qs, i) | static_cast<int>(((high >> i) & 1) << 4);
                w[i] = mul_add_unfused(d, static_cast<float>(q), m);
            }
        }
    } else if constexpr (T == kQ8_0) {
        const uint8_t* b = row + 34 * c;
        const float d = half_to_float(load_u16(b));
#pragma unroll
        for (int i = 0; i < 32; ++i) w[i] = d * static_cast<float>(static_cast<int8_t>(b[2 + i]));
    } else if constexpr (T == kMXFP4) {
        const uint8_t* b = row + 17 * c;
        const float d = mxfp4_scale(b[0]);
#pragma unroll
        for (int i = 0; i < 32; ++i) w[i] = d * static_cast<float>(kMxfp4Codebook[split_nibble(b + 1, i)]);
    } else if constexpr (T == kRocmfp4 || T == kRocmfp4Fast) {
        const uint8_t* b = row + (T == kRocmfp4 ? 18 : 17) * c;
        const float s0 = rocmfp_scale(b[16]);
        const float s1 = T == kRocmfp4 ? rocmfp_scale(b[17]) : s0;
#pragma unroll
        for (int i = 0; i < 32; ++i) w[i] = static_cast<float>(kRocmfp4Codebook[split_nibble(b, i)]) * (i < 16 ? s0 : s1);
    } else if constexpr (T == kRocmfp6) {
        const uint8_t* b = row + 26 * c;
        const float s0 = rocmfp_scale(b[24]), s1 = rocmfp_scale(b[25]);
#pragma unroll
        for (int i = 0; i < 32; ++i) w[i] = static_cast<float>(rocmfp6_value(stream_bits(b, 6 * i, 6))) * (i < 16 ? s0 : s1);
    } else if constexpr (T == kRocmfp8) {
        const uint8_t* b = row + 33 * c;
        const float s = rocmfp_scale(b[32]);
#pragma unroll
        for (int i = 0; i < 32; ++i) w[i] = static_cast<float>(static_cast<int8_t>(b[i])) * s;
    } else if constexpr (T == kRocmfp3) {
        const uint8_t* b = row + 14 * c;
        const float s0 = rocmfp_scale(b[12]), s1 = rocmfp_scale(b[13]);
#pragma unroll
        for (int i = 0; i < 32; ++i) w[i] = static_cast<float>(kRocmfp3Codebook[stream_bits(b, 3 * i, 3)]) * (i < 16 ? s0 : s1);
    } else if constexpr (T == kQ2_K) {  // 84 bytes: scales[16], qs[64], d, dmin
        const uint8_t* b = row + 84 * (c / 8);
        const int base = 32 * static_cast<int>(c % 8);
        const float d = half_to_float(load_u16(b + 80)), dmin = half_to_float(load_u16(b + 82));
        const int h = base / 128, j = (base % 128) / 32;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const uint8_t sc = b[(base + 16 * half) / 16];
            const float dl = d * static_cast<float>(sc & 0x0f), ml = dmin * static_cast<float>(sc >> 4);
#pragma unroll
            for (int l = 0; l < 16; ++l) {
                const int q = (b[16 + 32 * h + 16 * half + l] >> (2 * j)) & 3;
                w[16 * half + l] = mul_sub_unfused(dl, static_cast<float>(q), ml);
            }
        }
    } else if constexpr (T == kQ3_K) {  // 110 bytes: hmask[32], qs[64], scales[12], d
        const uint8_t* b = row + 110 * (c / 8);
        const int base = 32 * static_cast<int>(c % 8);
        const float d = half_to_float(load_u16(b + 108));
        const uint8_t* scales = b + 96;
        const int h = base / 128, j = (base % 128) / 32;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int s = (base + 16 * half) / 16;
            const int low4 = s < 8 ? (scales[s] & 0x0f) : (scales[s - 8] >> 4);
            const int high2 = (scales[8 + (s & 3)] >> (2 * (s >> 2))) & 3;
            const float dl = d * static_cast<float>((low4 | (high2 << 4)) - 32);
#pragma unroll
            for (int l0 = 0; l0 < 16; ++l0) {
                const int l = 16 * half + l0;
                const int low = (b[32 + 32 * h + l] >> (2 * j)) & 3;
                const int high = (b[l] >> (base / 32)) & 1;
                w[l] = dl * static_cast<float>(low - (high ? 0 : 4));
            }
        }
    } else if constexpr (T == kQ4_K || T == kQ5_K) {  // d, dmin, scales[12], (qh[32]), qs[128]
        const uint8_t* b = row + (T == kQ4_K ? 144 : 176) * (c / 8);
        const int s = static_cast<int>(c % 8);
        const float d = half_to_float(load_u16(b)), dmin = half_to_float(load_u16(b + 2));
        const uint8_t* scales = b + 4;
        int sc, m;
        if (s < 4) {
            sc = scales[s] & 63;
            m = scales[s + 4] & 63;
        } else {
            sc = (scales[s + 4] & 0x0f) | ((scales[s - 4] >> 6) << 4);
            m = (scales[s + 4] >> 4) | ((scales[s] >> 6) << 4);
        }
        const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
        const uint8_t* qh = b + 16;
        const uint8_t* qs = b + (T == kQ4_K ? 16 : 48);
#pragma unroll
        for (int l = 0; l < 32; ++l) {
            int q = (qs[32 * (s / 2) + l] >> (4 * (s & 1))) & 0x0f;
            if constexpr (T == kQ5_K) q |= ((qh[l] >> s) & 1) << 4;
            w[l] = mul_sub_unfused(d1, static_cast<float>(q), m1);
        }
    } else if constexpr (T == kQ6_K) {  // ql[128], qh[64], scales[16] (int8), d
        const uint8_t* b = row + 210 * (c / 8);
        const int base = 32 * static_cast<int>(c % 8);
        const float d = half_to_float(load_u16(b + 208));
        const int h = base / 128;
#pragma unroll
        for (int l = 0; l < 32; ++l) {
            const int i = base + l, r = i % 128;
            const int low = (b[64 * h + r % 64] >> (4 * (r / 64))) & 0x0f;
            const int high = (b[128 + 32 * h + r % 32] >> (2 * (r / 32))) & 3;
            const float dl = d * static_cast<float>(static_cast<int8_t>(b[192 + i / 16]));
            w[l] = dl * static_cast<float>((low | (high << 4)) - 32);
        }
    } else {
        static_assert(T == kF32, "decode32: unsupported type");
    }
}

// Calls f.template operator()<T>() with the compile-time type matching `type` (false for unsupported types).
template <typename F>
bool dispatch_weight_type(uint32_t type, F&& f) {
    switch (type) {
        case kF32: f.template operator()<kF32>(); return true;
        case kF16: f.template operator()<kF16>(); return true;
        case kBF16: f.template operator()<kBF16>(); return true;
        case kQ4_0: f.template operator()<kQ4_0>(); return true;
        case kQ4_1: f.template operator()<kQ4_1>(); return true;
        case kQ5_0: f.template operator()<kQ5_0>(); return true;
        case kQ5_1: f.template operator()<kQ5_1>(); return true;
        case kQ8_0: f.template operator()<kQ8_0>(); return true;
        case kQ2_K: f.template operator()<kQ2_K>(); return true;
        case kQ3_K: f.template operator()<kQ3_K>(); return true;
        case kQ4_K: f.template operator()<kQ4_K>(); return true;
        case kQ5_K: f.template operator()<kQ5_K>(); return true;
        case kQ6_K: f.template operator()<kQ6_K>(); return true;
        case kMXFP4: f.template operator()<kMXFP4>(); return true;
        case kRocmfp4: f.template operator()<kRocmfp4>(); return true;
        case kRocmfp4Fast: f.template operator()<kRocmfp4Fast>(); return true;
        case kRocmfp6: f.template operator()<kRocmfp6>(); return true;
        case kRocmfp8: f.template operator()<kRocmfp8>(); return true;
        case kRocmfp3: f.template operator()<kRocmfp3>(); return true;
        default: return false;
    }
}

// Q8_0 block of 32 floats at b (34 bytes), as quant::quantize_row encodes it: scale amax / 127, codes rounded half
// away from zero, NaN to 0.
__device__ __forceinline__ void encode_q8_0_block(const float* v, uint8_t* b) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = fmaxf(amax, fabsf(v[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    gpu::store_half_scale(b, gpu::float_to_half(d));
    for (int j = 0; j < 32; ++j) {
        const float q = roundf(v[j] * id);
        b[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(q != q ? 0.0f : fminf(fmaxf(q, -127.0f), 127.0f)));
    }
}

}  // namespace ember::gpu_kernels
