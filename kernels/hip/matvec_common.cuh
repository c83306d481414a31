// SPDX-License-Identifier: MIT
// Pieces shared by the matrix-product kernels: the integer path's block decoding and dot products, the row walks of
// the integer and float mat x vec (each sum's order is defined here once), and the launch helpers.
#pragma once

#include "activation_blocks.cuh"
#include "activations.cuh"
#include "quant_blocks.cuh"

namespace ember::gpu_kernels {

// Sum over the LPR consecutive lanes of a group (LPR a power of two no larger than the warp).
template <int LPR>
__device__ __forceinline__ float group_sum(float v) {
    static_assert(LPR <= gpu::kWarpSize || gpu::kWarpSize < 32, "a row group must fit in a warp");
#pragma unroll
    for (int m = LPR / 2; m > 0; m >>= 1) v += gpu::shuffle_xor(v, m);
    return v;
}

// The byte-wise negation of four int8 values.
__host__ __device__ constexpr uint32_t negated_bytes(uint32_t v) {
    uint32_t r = 0;
    for (int i = 0; i < 4; ++i) r |= ((0x100u - ((v >> (8 * i)) & 0xffu)) & 0xffu) << (8 * i);
    return r;
}

// Four 4-bit codes (one per byte, 0..15, bit 3 the sign) to their int8 values through a codebook's eight magnitudes
// (the bytes of kLo, then of kHi): two 8-entry byte-permute lookups, one for the positive half of the codebook and
// one for the negative half, selected per byte by the code's sign bit.
template <uint32_t kLo, uint32_t kHi>
__device__ __forceinline__ uint32_t fp4_values(uint32_t codes) {
    const uint32_t idx = codes & 0x07070707u;
    const uint32_t positive = gpu::lookup8(kLo, kHi, idx);
    constexpr uint32_t kNegLo = negated_bytes(kLo), kNegHi = negated_bytes(kHi);
    const uint32_t negative = gpu::lookup8(kNegLo, kNegHi, idx);
    const uint32_t mask = ((codes >> 3) & 0x01010101u) * 0xffu;
    return gpu::select_bytes(mask, negative, positive);
}

// ROCmFP4's codebook {0, 1, 2, 3, 4, 6, 8, 10} and MXFP4's E2M1 values doubled {0, 1, 2, 3, 4, 6, 8, 12}.
__device__ __forceinline__ uint32_t rocmfp4_values(uint32_t codes) {
    return fp4_values<0x03020100u, 0x0a080604u>(codes);
}
__device__ __forceinline__ uint32_t mxfp4_values(uint32_t codes) {
    return fp4_values<0x03020100u, 0x0c080604u>(codes);
}

// One weight block expanded to int8 values with its scales (s1: the second half's scale, ROCmFP4 dual only).
struct IntegerBlock {
    int v[8];
    float s0 = 0.0f, s1 = 0.0f;
};

template <int T>
inline constexpr int kIntegerBlockBytes =
    T == kRocmfp4 ? 18 : T == kRocmfp4Fast || T == kMXFP4 ? 17 : T == kQ4_0 ? 18 : 34;

// A block of the integer path from its kIntegerBlockBytes<T> bytes as aligned words (gpu::load_unaligned): values
// v[i] are inputs 4i .. 4i + 3.
template <int T>
__device__ __forceinline__ IntegerBlock expand_integer_block(const uint32_t* w) {
    IntegerBlock b;
    if constexpr (T == kRocmfp4 || T == kRocmfp4Fast) {  // 16 code bytes, then the scales
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            b.v[i] = static_cast<int>(rocmfp4_values(w[i] & 0x0f0f0f0fu));
            b.v[4 + i] = static_cast<int>(rocmfp4_values((w[i] >> 4) & 0x0f0f0f0fu));
        }
        b.s0 = rocmfp_scale(static_cast<uint8_t>(w[4] & 0xff));
        b.s1 = T == kRocmfp4 ? rocmfp_scale(static_cast<uint8_t>((w[4] >> 8) & 0xff)) : b.s0;
    } else if constexpr (T == kMXFP4) {  // the E8M0 scale byte, then 16 code bytes
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const uint32_t q = (w[i] >> 8) | (w[i + 1] << 24);
            b.v[i] = static_cast<int>(mxfp4_values(q & 0x0f0f0f0fu));
            b.v[4 + i] = static_cast<int>(mxfp4_values((q >> 4) & 0x0f0f0f0fu));
        }
        b.s0 = b.s1 = mxfp4_scale(static_cast<uint8_t>(w[0] & 0xff));
    } else {  // Q4_0 (unsigned codes; integer_dot takes the offset of 8), Q8_0: an f16 scale, then the codes
        b.s0 = b.s1 = half_to_float(static_cast<uint16_t>(w[0] & 0xffffu));
#pragma unroll
        for (int i = 0; i < (T == kQ4_0 ? 4 : 8); ++i) {
            const uint32_t q = (w[i] >> 16) | (w[i + 1] << 16);
            if constexpr (T == kQ4_0) {
                b.v[i] = static_cast<int>(q & 0x0f0f0f0fu);
                b.v[4 + i] = static_cast<int>((q >> 4) & 0x0f0f0f0fu);
            } else {
                b.v[i] = static_cast<int>(q);
            }
        }
    }
    return b;
}

template <int T>
__device__ __forceinline__ IntegerBlock load_integer_block(const uint8_t* blk) {
    uint32_t w[(kIntegerBlockBytes<T> + 3) / 4];
    gpu::load_unaligned<kIntegerBlockBytes<T>>(blk, w);
    return expand_integer_block<T>(w);
}

// A decoded weight block . one token's activation block.
template <int T>
__device__ __forceinline__ float integer_dot(const IntegerBlock& b, const ActBlock& a) {
    if constexpr (T == kRocmfp4) {
        int lo = 0, hi = 0;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            lo = gpu::dot4_i8(b.v[i], a.q[i], lo);
            hi = gpu::dot4_i8(b.v[4 + i], a.q[4 + i], hi);
        }
        return a.d * (b.s0 * static_cast<float>(lo) + b.s1 * static_cast<float>(hi));
    } else {
        int sum = 0;
#pragma unroll
        for (int i = 0; i < 8; ++i) sum = gpu::dot4_i8(b.v[i], a.q[i], sum);
        if constexpr (T == kQ4_0)
            return b.s0 * (a.d * static_cast<float>(sum) - 8.0f * a.s);
        else
            return b.s0 * a.d * static_cast<float>(sum);
    }
}

// Row `row` of `w` (block bytes BB) against NT tokens; the LPR lanes of a group each return a partial sum. Two blocks
// are loaded before either is used, so that each lane has twice the bytes in flight; the sums keep the order b, b + LPR,
// b + 2 LPR, ... (the kernels that walk rows their own way sum in the same order).
template <int T, int NT, int LPR>
__device__ __forceinline__ void integer_row(const uint8_t* row, int nb, const ActBlock* x, int64_t x_step, int lane,
                                            float (&acc)[NT]) {
    int b = lane;
    for (; b + LPR < nb; b += 2 * LPR) {
        const IntegerBlock w0 = load_integer_block<T>(row + static_cast<size_t>(b) * kIntegerBlockBytes<T>);
        const IntegerBlock w1 = load_integer_block<T>(row + static_cast<size_t>(b + LPR) * kIntegerBlockBytes<T>);
#pragma unroll
        for (int t = 0; t < NT; ++t) acc[t] += integer_dot<T>(w0, x[b + t * x_step]);
#pragma unroll
        for (int t = 0; t < NT; ++t) acc[t] += integer_dot<T>(w1, x[b + LPR + t * x_step]);
    }
    if (b < nb) {
        const IntegerBlock w0 = load_integer_block<T>(row + static_cast<size_t>(b) * kIntegerBlockBytes<T>);
#pragma unroll
        for (int t = 0; t < NT; ++t) acc[t] += integer_dot<T>(w0, x[b + t * x_step]);
    }
}

// Lanes [0, LPR) of a thread group share one row: this thread's lane, and the group's row.
template <int LPR>
__device__ __forceinline__ int row_lane() {
    return threadIdx.x % LPR;
}
template <int LPR>
__device__ __forceinline__ int64_t lane_group_row() {
    return static_cast<int64_t>(blockIdx.x) * (blockDim.x / LPR) + threadIdx.x / LPR;
}

// The weight rows of block `block`'s lane groups (this block's own by default) asked into L2 by its first thread.
// Kernels whose weights do not depend on the grid before them call it before gpu::join_prior_grid(), so that their
// reads start while that grid runs.
template <int LPR>
__device__ __forceinline__ void prefetch_block_rows(const uint8_t* w, size_t row_stride, int64_t rows,
                                                    int64_t block = blockIdx.x) {
    const int64_t per_block = blockDim.x / LPR, first = block * per_block;
    const int64_t n = rows - first < per_block ? rows - first : per_block;
    if (threadIdx.x == 0 && n > 0) gpu::prefetch_l2(w + first * row_stride, static_cast<size_t>(n) * row_stride);
}

// Each activation row's sum over the lane group, plus the bias, stored by lane 0.
template <int NT, int LPR>
__device__ __forceinline__ void store_row_sums(const float (&acc)[NT], int lane, int64_t row, int64_t rows, float* out,
                                               int64_t out_stride, const float* bias) {
#pragma unroll
    for (int t = 0; t < NT; ++t) {
        const float sum = group_sum<LPR>(acc[t]);
        if (lane == 0 && row < rows) out[t * out_stride + row] = sum + (bias ? bias[row] : 0.0f);
    }
}

// A row against NT tokens, each lane's partial sums added column by column.
//   Float types: lane l takes columns l, l + LPR, l + 2 LPR, ..., so that a group's loads are consecutive words;
//     kFloatColumnLoads columns are loaded before any is used.
//   Block types (rows of whole blocks): the row's chunks of 32 in lane order, two chunks decoded before either is
//     used (their loads overlap); the sums are added chunk by chunk, so the order is the one-chunk order.
constexpr int kFloatColumnLoads = 8;

template <int T, int NT, int LPR>
__device__ __forceinline__ void float_row(const uint8_t* row, int64_t cols, const float* x, int64_t x_stride, int lane,
                                          float (&acc)[NT]) {
    if constexpr (kFloatWeights<T>) {
        constexpr int U = kFloatColumnLoads;
        int64_t c = lane;
        for (; c + (U - 1) * LPR < cols; c += U * LPR) {
            float wv[U];
#pragma unroll
            for (int u = 0; u < U; ++u) wv[u] = float_weight<T>(row, c + u * LPR);
#pragma unroll
            for (int t = 0; t < NT; ++t) {
                const float* xt = x + t * x_stride + c;
#pragma unroll
                for (int u = 0; u < U; ++u) acc[t] += wv[u] * xt[u * LPR];
            }
        }
        for (; c < cols; c += LPR) {
            const float wv = float_weight<T>(row, c);
#pragma unroll
            for (int t = 0; t < NT; ++t) acc[t] += wv * x[t * x_stride + c];
        }
        return;
    }
    const int64_t chunks = (cols + 31) / 32;
    for (int64_t c0 = lane; c0 < chunks; c0 += 2 * LPR) {
        float wv[2][32];
        const bool second = c0 + LPR < chunks;
        decode32<T>(row, c0, wv[0]);
        if (second) decode32<T>(row, c0 + LPR, wv[1]);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            if (h == 1 && !second) continue;
            const int64_t c = c0 + h * LPR;
#pragma unroll
            for (int t = 0; t < NT; ++t) {
                const float* xt = x + t * x_stride + 32 * c;
                float s = 0.0f;
#pragma unroll
                for (int i = 0; i < 32; ++i) s += wv[h][i] * xt[i];
                acc[t] += s;
            }
        }
    }
}

// --- launch helpers (host) ---------------------------------------------------------------------------------------

constexpr int kMatvecThreads = 128;
// The most tokens one launch takes: 16 on the integer path and for float weights, 8 for the other types of the float
// path (their 64 decoded weights per lane leave room for fewer accumulators).
constexpr int kIntegerRunTokens = 16;
template <int T>
inline constexpr int kFloatRunTokens = kFloatWeights<T> ? 16 : 8;
// The gated products keep two accumulators per token.
constexpr int kGatedRunTokens = 8;

// Lanes per row: 32 for rows of at least 32 blocks, else 16 (short rows such as the expert down projections).
template <typename F>
void with_lanes(int64_t chunks, F&& f) {
    if (chunks >= 32)
        f.template operator()<32>();
    else
        f.template operator()<16>();
}

// Token counts are split into runs of MaxRun (16 or 8), then 8, 4, 2 and 1 so that only those instances exist.
template <int MaxRun>
int64_t token_run(int64_t left) {
    return MaxRun >= 16 && left >= 16 ? 16 : left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
}

template <int MaxRun, typename F>
void with_tokens(int64_t run, F&& f) {
    switch (run) {
        case 1: f.template operator()<1>(); break;
        case 2: f.template operator()<2>(); break;
        case 4: f.template operator()<4>(); break;
        case 8: f.template operator()<8>(); break;
        default:
            if constexpr (MaxRun >= 16) f.template operator()<16>();
            break;
    }
}

// The types with an integer (Q8_1 activation) path.
constexpr bool integer_path(uint32_t type) {
    return type == kRocmfp4 || type == kRocmfp4Fast || type == kMXFP4 || type == kQ4_0 || type == kQ8_0;
}

template <typename F>
bool dispatch_integer_type(uint32_t type, F&& f) {
    return integer_path(type) && dispatch_weight_type(type, [&]<int T>() {
        if constexpr (integer_path(T)) f.template operator()<T>();
    });
}

}  // namespace ember::gpu_kernels
