// SPDX-License-Identifier: MIT
// Tensor-core tiles (matmul_mma.cuh). A block of 8 warps computes 128 weight rows x BN tokens. Block-quantized
// weights: per step of 64 inputs the threads decode the weight tile to f16 in shared memory (a row chunk of 32
// each) and stage the activations as f16 beside it, and each warp multiplies its sub-tile with m16n8k16 products
// into f32. Float weights (F32, F16, BF16): steps of 32 inputs kept as floats, each product done as three TF32
// products (m16n8k8) of the split operands, which keeps the sums close to f32 ones.
#include <algorithm>

#include "kernel_launch.cuh"
#include "matmul_mma.cuh"
#include "matvec_common.cuh"
#include "mma_tiles.cuh"

namespace ember::gpu_kernels {

#if defined(EMBER_GPU_CUDA)

namespace {

constexpr int kThreads = kMmaThreads;
constexpr int kRows = kMmaRows;
constexpr int kLeadWords = 36;  // words per shared row: 32 of data, 4 of padding

__host__ __device__ constexpr bool block_type(uint32_t t) {
    return t != kF32 && t != kF16 && t != kBF16;
}

__device__ __forceinline__ uint32_t pack_half2(float a, float b) {
    const __half2 h = __floats2half2_rn(a, b);
    return *reinterpret_cast<const uint32_t*>(&h);
}

// d += a (16 x 16, row) . b (16 x 8, col), f16 inputs, f32 accumulators.
__device__ __forceinline__ void mma_16x8x16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    __trap();  // the host launches these kernels only on sm_80 and later
#endif
}

// The 4-bit types whose f16 values the tiles build straight from the bits: a codebook or an offset with few mantissa
// bits in the codes and scales.
template <int T>
inline constexpr bool kNibbleHalves = T == kRocmfp4 || T == kRocmfp4Fast || T == kQ4_0;

// A weight block's 32 values as fetched from memory, before the decode to f16 pairs: the nibble types keep their 16
// code bytes and scale bits (so that the loads of the next step are in flight while the tensor cores work), other
// types are decoded at the fetch (h holds the f16 pairs, or the raw floats of the float types).
template <int T>
struct RawWeights {
    uint32_t h[kNibbleHalves<T> ? 5 : 16];
};

template <int T>
__device__ __forceinline__ void decode32_through_floats(const uint8_t* row, int64_t c, uint32_t (&h)[16]);

// Weights [32c, 32c + 32) of a row, fetched (block types).
template <int T>
__device__ __forceinline__ void fetch32(const uint8_t* row, int64_t c, RawWeights<T>& raw) {
    if constexpr (kNibbleHalves<T>) {
        constexpr int kBytes = T == kRocmfp4Fast ? 17 : 18;
        const uint8_t* b = row + kBytes * c;
        uint32_t qs[4];
        gpu::load_unaligned<16>(T == kQ4_0 ? b + 2 : b, qs);
#pragma unroll
        for (int i = 0; i < 4; ++i) raw.h[i] = qs[i];
        raw.h[4] = T == kQ4_0 ? load_u16(b) : T == kRocmfp4 ? load_u16(b + 16) : b[16];
    } else {
        decode32_through_floats<T>(row, c, raw.h);
    }
}

// A fetched block as 16 f16 pairs (pair j: weights 2j, 2j + 1). The nibble types build their f16 values from the
// bits (exact; Q4_0's d * q is rounded once, as the float decode followed by a rounding to f16).
template <int T>
__device__ __forceinline__ void decode32_half(const RawWeights<T>& raw, uint32_t (&h)[16]) {
    if constexpr (kNibbleHalves<T>) {
        __half2 scale0, scale1;
        if constexpr (T == kQ4_0) {
            scale0 = scale1 = __half2half2(__ushort_as_half(static_cast<uint16_t>(raw.h[4])));
        } else {
            scale0 = __float2half2_rn(rocmfp_scale(static_cast<uint8_t>(raw.h[4] & 0xff)));
            scale1 = T == kRocmfp4 ? __float2half2_rn(rocmfp_scale(static_cast<uint8_t>(raw.h[4] >> 8))) : scale0;
        }
        const __half2 bias = __float2half2_rn(T == kQ4_0 ? 1032.0f : 1024.0f);  // the 0x64 high byte is 1024
#pragma unroll
        for (int j = 0; j < 4; ++j) {
#pragma unroll
            for (int hi = 0; hi < 2; ++hi) {  // low nibbles: weights 4j..4j+3; high nibbles: 16 + 4j..
                const uint32_t nib = (raw.h[j] >> (4 * hi)) & 0x0f0f0f0fu;
                uint32_t mag = nib, sign = 0;
                if constexpr (T != kQ4_0) {  // codebook {0, 1, 2, 3, 4, 6, 8, 10}, bit 3 the sign
                    mag = gpu::lookup8(0x03020100u, 0x0a080604u, nib & 0x07070707u);
                    sign = nib & 0x08080808u;
                }
#pragma unroll
                for (int p = 0; p < 2; ++p) {  // bytes 2p, 2p + 1 -> one f16 pair (1024 + value)
                    const uint32_t bits = __byte_perm(mag, 0x64u, p == 0 ? 0x4140u : 0x4342u);
                    const __half2 m = __hsub2(*reinterpret_cast<const __half2*>(&bits), bias);  // exact
                    uint32_t value = *reinterpret_cast<const uint32_t*>(&m);
                    if constexpr (T != kQ4_0) {
                        const uint32_t s = sign >> (16 * p);  // bits 3 and 11: the signs of this pair
                        value ^= ((s & 0x8u) << 12) | ((s & 0x800u) << 20);
                    }
                    const __half2 v = __hmul2(*reinterpret_cast<const __half2*>(&value), hi ? scale1 : scale0);
                    h[8 * hi + 2 * j + p] = *reinterpret_cast<const uint32_t*>(&v);
                }
            }
        }
    } else {
#pragma unroll
        for (int i = 0; i < 16; ++i) h[i] = raw.h[i];
    }
}

template <int T>
__device__ __forceinline__ void decode32_through_floats(const uint8_t* row, int64_t c, uint32_t (&h)[16]) {
    float v[32];
    decode32<T>(row, c, v);
#pragma unroll
    for (int i = 0; i < 16; ++i) h[i] = pack_half2(v[2 * i], v[2 * i + 1]);
}

// d += a (16 x 8, row) . b (8 x 8, col), TF32 inputs (the low 13 bits of each float are ignored), f32 sums.
__device__ __forceinline__ void mma_16x8x8_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    __trap();
#endif
}

__device__ __forceinline__ uint32_t round_tf32(float v) {
    uint32_t r;
#if __CUDA_ARCH__ >= 800
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
#else
    r = __float_as_uint(v);
#endif
    return r;
}

// A float as a TF32 head and the rounded remainder: three TF32 products (small x big, big x small, big x big)
// keep about 22 significant bits, near an f32 product.
__device__ __forceinline__ void split_tf32(uint32_t v, uint32_t& big, uint32_t& small) {
    big = round_tf32(__uint_as_float(v));
    small = round_tf32(__uint_as_float(v) - __uint_as_float(big));
}

// Element k of a float row (0 past its end).
template <int T>
__device__ __forceinline__ float float_at(const uint8_t* row, int64_t k, int64_t cols) {
    if (k >= cols) return 0.0f;
    if constexpr (T == kF32)
        return reinterpret_cast<const float*>(row)[k];
    else if constexpr (T == kF16)
        return half_to_float(reinterpret_cast<const uint16_t*>(row)[k]);
    else
        return gpu::bf16_to_float(reinterpret_cast<const uint16_t*>(row)[k]);
}

// One tiled product's operands. Gated: w and w_up are the gate and up matrices of one shape and type, and the block
// writes act(w . x, w_up . x) (no bias).
struct MmaArgs {
    const uint8_t* w = nullptr;
    const uint8_t* w_up = nullptr;
    size_t row_stride = 0;
    int64_t rows = 0, cols = 0;
    const float* x = nullptr;
    int64_t x_stride = 0;
    bool x_per_slot = false;
    int k = 1;
    ExpertGroups groups;
    int64_t tokens = 0;
    float* out = nullptr;
    int64_t out_stride = 0;
    const float* bias = nullptr;
    Gated act = Gated::silu;
    // Split along the inputs (dense, not gated): block z sums steps [z * split_steps, (z + 1) * split_steps) into
    // partial[z, token, row] (split_sum_kernel adds the parts and the bias); 0: one block sums every step into out.
    int64_t split_steps = 0;
    float* partial = nullptr;
};

// The block's tokens: load_token_tile (expert_tiles.cuh). Shared rows hold kLeadWords words: 64 inputs as f16
// pairs (block types) or 32 floats (float types), then 4 words of padding so that fragment loads hit 32 distinct
// banks. GATED (block types only) keeps a tile of each matrix and multiplies both by the same activations.
template <int T, int BN, bool GATED>
__global__ __launch_bounds__(kThreads, 2) void mma_kernel(MmaArgs a) {
    gpu::join_prior_grid();
    constexpr bool kHalves = block_type(T);
    static_assert(kHalves || !GATED, "gated tiles take block-quantized weights");
    constexpr int kMats = GATED ? 2 : 1;
    constexpr int kStep = kHalves ? 64 : 32;  // inputs per shared-memory step
    using Warps = MmaWarpTile<BN>;
    constexpr int kWarpsN = Warps::kWarpsN, kWarpRows = Warps::kWarpRows, kWarpCols = Warps::kWarpCols;
    constexpr int MT = Warps::MT, NT = Warps::NT;
    __shared__ __align__(16) uint32_t ws[kMats][kRows][kLeadWords];
    __shared__ __align__(16) uint32_t xs[BN][kLeadWords];
    __shared__ int64_t x_row[BN];
    __shared__ int64_t out_row[BN];

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / kWarpsN, wn = warp % kWarpsN;
    const int g = lane >> 2, t = lane & 3;
    const int64_t m0 = static_cast<int64_t>(blockIdx.x) * kRows;
    const int64_t rows = a.rows, cols = a.cols;
    int expert = 0;
    const int n = load_token_tile<BN>(a.groups, a.tokens, a.x_per_slot, a.k, x_row, out_row, expert);
    if (n <= 0) return;
    const size_t expert_offset = static_cast<size_t>(expert) * static_cast<size_t>(rows) * a.row_stride;
    const int64_t all_steps = (cols + kStep - 1) / kStep;
    const int64_t first_step = a.split_steps ? blockIdx.z * a.split_steps : 0;
    const int64_t steps = a.split_steps ? min(all_steps, first_step + a.split_steps) : all_steps;
    // Each thread fetches one weight block of each matrix (row tid % 128, half tid / 128 of the step) and kXWords
    // activation words of a step into registers; the next step's fetch is issued before this step's products, so
    // its loads are in flight while the tensor cores work.
    constexpr int kXWords = BN * 32 / kThreads;
    const int wr_row = tid % kRows, wr_part = tid / kRows;
    const bool row_ok = m0 + wr_row < rows;
    const uint8_t* wr_ptr[kMats];
    wr_ptr[0] = a.w + expert_offset + (m0 + wr_row) * a.row_stride;
    if constexpr (GATED) wr_ptr[kMats - 1] = a.w_up + expert_offset + (m0 + wr_row) * a.row_stride;
    RawWeights<T> raw[kMats];
    float2 xa[kXWords];
    __syncthreads();  // x_row from load_token_tile
    const auto fetch = [&](int64_t step) {
        const int64_t k0 = step * kStep;
#pragma unroll
        for (int u = 0; u < kMats; ++u) {
            if constexpr (kHalves) {
                const int64_t c = k0 / 32 + wr_part;
                if (row_ok && 32 * c < cols) {
                    fetch32<T>(wr_ptr[u], c, raw[u]);
                } else {
#pragma unroll
                    for (int i = 0; i < static_cast<int>(sizeof(raw[u].h) / 4); ++i) raw[u].h[i] = 0u;
                    if constexpr (kNibbleHalves<T>) raw[u].h[4] = 0xffffffffu;  // marks a block past the end
                }
            } else {
                const int64_t c0 = k0 + 16 * wr_part;
                const uint8_t* src = wr_ptr[u] + c0 * (T == kF32 ? 4 : 2);
                if (row_ok && c0 + 16 <= cols && (reinterpret_cast<uintptr_t>(src) & 15) == 0) {
                    // 16 inputs in four (F32) or two (F16, BF16) 16-byte loads
                    if constexpr (T == kF32) {
#pragma unroll
                        for (int q = 0; q < 4; ++q) {
                            const uint4 v = reinterpret_cast<const uint4*>(src)[q];
                            raw[u].h[4 * q] = v.x, raw[u].h[4 * q + 1] = v.y, raw[u].h[4 * q + 2] = v.z,
                                         raw[u].h[4 * q + 3] = v.w;
                        }
                    } else {
#pragma unroll
                        for (int q = 0; q < 2; ++q) {
                            const uint4 v = reinterpret_cast<const uint4*>(src)[q];
                            const uint32_t pairs[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                            for (int i = 0; i < 4; ++i) {
                                const uint16_t lo = static_cast<uint16_t>(pairs[i] & 0xffffu);
                                const uint16_t hi = static_cast<uint16_t>(pairs[i] >> 16);
                                raw[u].h[8 * q + 2 * i] = __float_as_uint(
                                    T == kF16 ? half_to_float(lo) : gpu::bf16_to_float(lo));
                                raw[u].h[8 * q + 2 * i + 1] = __float_as_uint(
                                    T == kF16 ? half_to_float(hi) : gpu::bf16_to_float(hi));
                            }
                        }
                    }
                } else {
#pragma unroll
                    for (int i = 0; i < 16; ++i)
                        raw[u].h[i] = row_ok ? __float_as_uint(float_at<T>(wr_ptr[u], c0 + i, cols)) : 0u;
                }
            }
        }
#pragma unroll
        for (int i = 0; i < kXWords; ++i) {
            const int e = tid + i * kThreads, row = e / 32, word = e % 32;
            const int64_t xr = x_row[row];
            const float* xp = a.x + xr * a.x_stride;
            if constexpr (kHalves) {
                const int64_t col = k0 + 2 * word;
                if (xr < 0 || col >= cols)
                    xa[i] = make_float2(0.0f, 0.0f);
                else if ((reinterpret_cast<uintptr_t>(xp + col) & 7) == 0)
                    xa[i] = *reinterpret_cast<const float2*>(xp + col);
                else
                    xa[i] = make_float2(xp[col], xp[col + 1]);
            } else {
                const int64_t col = k0 + word;
                xa[i].x = xr >= 0 && col < cols ? xp[col] : 0.0f;
            }
        }
    };
    fetch(first_step);
    float acc[kMats][MT][NT][4] = {};
    for (int64_t step = first_step; step < steps; ++step) {
        __syncthreads();  // the previous step's products are done with the shared tiles
#pragma unroll
        for (int u = 0; u < kMats; ++u) {
            uint32_t v[16];
            decode32_half<T>(raw[u], v);
            if constexpr (kNibbleHalves<T>) {
                if (raw[u].h[4] == 0xffffffffu)
#pragma unroll
                    for (int i = 0; i < 16; ++i) v[i] = 0u;
            }
            uint4* dst = reinterpret_cast<uint4*>(&ws[u][wr_row][16 * wr_part]);
#pragma unroll
            for (int q = 0; q < 4; ++q) dst[q] = make_uint4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
        }
#pragma unroll
        for (int i = 0; i < kXWords; ++i) {
            const int e = tid + i * kThreads;
            xs[e / 32][e % 32] = kHalves ? pack_half2(xa[i].x, xa[i].y) : __float_as_uint(xa[i].x);
        }
        __syncthreads();
        if (step + 1 < steps) fetch(step + 1);
        if constexpr (kHalves) {
            // ldmatrix: lane quarter lq addresses 8x8 matrix lq, row lr of it. A (16 rows x 16 inputs): matrices
            // rows 0-7 / 8-15 by lq & 1, inputs 0-7 / 8-15 by lq >> 1. B (16 inputs x two 8-token tiles): inputs
            // by lq & 1, tile by lq >> 1.
            const int lq = lane >> 3, lr = lane & 7;
            static_assert(NT % 2 == 0, "B fragments are loaded two token tiles at a time");
#pragma unroll
            for (int ks = 0; ks < 32; ks += 8) {  // in words: 16 inputs per product
                uint32_t b[NT][2];
#pragma unroll
                for (int np = 0; np < NT; np += 2) {
                    uint32_t r[4];
                    ldmatrix_x4(r, &xs[wn * kWarpCols + np * 8 + 8 * (lq >> 1) + lr][ks + 4 * (lq & 1)]);
                    b[np][0] = r[0];
                    b[np][1] = r[1];
                    b[np + 1][0] = r[2];
                    b[np + 1][1] = r[3];
                }
#pragma unroll
                for (int u = 0; u < kMats; ++u) {
                    uint32_t fa[MT][4];
#pragma unroll
                    for (int mt = 0; mt < MT; ++mt)
                        ldmatrix_x4(fa[mt], &ws[u][wm * kWarpRows + mt * 16 + 8 * (lq & 1) + lr][ks + 4 * (lq >> 1)]);
#pragma unroll
                    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                        for (int nt = 0; nt < NT; ++nt) mma_16x8x16(acc[u][mt][nt], fa[mt], b[nt]);
                }
            }
        } else {
            // The tensor cores' own accumulation drops low bits: each step's 32 inputs are summed there from
            // zero, and the steps are added in f32 here.
            float part[MT][NT][4] = {};
#pragma unroll
            for (int ks = 0; ks < 32; ks += 8) {  // 8 inputs per product
                uint32_t a_big[MT][4], a_small[MT][4], b_big[NT][2], b_small[NT][2];
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    const int r = wm * kWarpRows + mt * 16 + g;
                    split_tf32(ws[0][r][ks + t], a_big[mt][0], a_small[mt][0]);
                    split_tf32(ws[0][r + 8][ks + t], a_big[mt][1], a_small[mt][1]);
                    split_tf32(ws[0][r][ks + 4 + t], a_big[mt][2], a_small[mt][2]);
                    split_tf32(ws[0][r + 8][ks + 4 + t], a_big[mt][3], a_small[mt][3]);
                }
#pragma unroll
                for (int nt = 0; nt < NT; ++nt) {
                    const int col = wn * kWarpCols + nt * 8 + g;
                    split_tf32(xs[col][ks + t], b_big[nt][0], b_small[nt][0]);
                    split_tf32(xs[col][ks + 4 + t], b_big[nt][1], b_small[nt][1]);
                }
#pragma unroll
                for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                    for (int nt = 0; nt < NT; ++nt) {
                        mma_16x8x8_tf32(part[mt][nt], a_small[mt], b_big[nt]);
                        mma_16x8x8_tf32(part[mt][nt], a_big[mt], b_small[nt]);
                        mma_16x8x8_tf32(part[mt][nt], a_big[mt], b_big[nt]);
                    }
            }
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                    for (int i = 0; i < 4; ++i) acc[0][mt][nt][i] += part[mt][nt][i];
        }
    }
    const MmaTileOut o{.out = a.out, .out_stride = a.out_stride, .bias = a.bias, .act = a.act, .partial = a.partial,
                       .part = blockIdx.z, .tokens = a.tokens};
    store_mma_tile<BN, kMats, GATED>(acc, wm, wn, g, t, m0, rows, n, out_row, o);
}

}  // namespace

#endif  // EMBER_GPU_CUDA

bool mma_available(const Launch& l, uint32_t type) {
#if defined(EMBER_GPU_CUDA)
    // The device has tensor cores, and the kernels were built for them: code JIT-compiled from older PTX (the
    // portable compute_75 part of a default build, on a newer GPU) holds only the trap.
    static const bool built_for_them =
        gpu::kernel_ptx_version(reinterpret_cast<const void*>(&mma_kernel<kQ4_0, 64, false>)) >= 80;
    return l.matrix_cores && built_for_them && weight_type_supported(type);
#else
    (void)l;
    (void)type;
    return false;
#endif
}

bool mma_gated_available(const Launch& l, const Weights& gate, const Weights& up) {
#if defined(EMBER_GPU_CUDA)
    return gate.type == up.type && gate.rows == up.rows && gate.cols == up.cols && gate.row_stride == up.row_stride &&
           block_type(gate.type) && mma_available(l, gate.type);
#else
    (void)l, (void)gate, (void)up;
    return false;
#endif
}

#if defined(EMBER_GPU_CUDA)
namespace {

// Launches mma_kernel<T, BN, GATED> for w's type, BN one of 64, 32, 16 (GATED: 32 or 16).
template <bool GATED>
void launch_mma(const Launch& l, uint32_t type, int bn, dim3 grid, const MmaArgs& a) {
    dispatch_weight_type(type, [&]<int T>() {
        if constexpr (!GATED || block_type(T))  // mma_gated_available keeps float weights off the gated path
            with_mma_tile_tokens<GATED>(
                bn, [&]<int BN>() { launch_kernel(l, mma_kernel<T, BN, GATED>, grid, kThreads, 0, a); });
    });
}

MmaSplit dense_split(const Launch& l, const Weights& w, int64_t tokens) {
    const int64_t steps = (w.cols + (block_type(w.type) ? 63 : 31)) / (block_type(w.type) ? 64 : 32);
    return mma_dense_split(l, w.rows, tokens, steps, 64);
}

MmaArgs dense_args(const Weights& w, const Rows& x, const Rows& out) {
    return {.w = w.data, .row_stride = w.row_stride, .rows = w.rows, .cols = w.cols, .x = x.data, .x_stride = x.stride,
            .tokens = x.rows, .out = out.data, .out_stride = out.stride};
}

MmaArgs expert_args(const Weights& w, int64_t n_experts, const Rows& x, bool x_per_slot, int k,
                    const ExpertGroups& groups, int64_t slots, const Rows& out) {
    return {.w = w.data, .row_stride = w.row_stride, .rows = w.rows / n_experts, .cols = w.cols, .x = x.data,
            .x_stride = x.stride, .x_per_slot = x_per_slot, .k = k, .groups = groups, .tokens = slots, .out = out.data,
            .out_stride = out.stride};
}

}  // namespace
#endif

size_t matmul_mma_split_bytes(const Launch& l, const Weights& w, int64_t tokens) {
#if defined(EMBER_GPU_CUDA)
    return mma_split_bytes(dense_split(l, w, tokens), tokens, w.rows);
#else
    (void)l, (void)w, (void)tokens;
    return 0;
#endif
}

void matmul_mma(const Launch& l, const Weights& w, const Rows& x, const Rows& out, const float* bias, void* split) {
#if defined(EMBER_GPU_CUDA)
    const MmaSplit s = dense_split(l, w, x.rows);
    MmaArgs a = dense_args(w, x, out);
    a.bias = bias;
    dim3 grid = mma_dense_grid(w.rows, x.rows, s.bn);
    if (s.splits > 1 && split) {
        a.split_steps = s.split_steps;
        a.partial = static_cast<float*>(split);
        grid.z = static_cast<unsigned>(s.splits);
    }
    launch_mma<false>(l, w.type, s.bn, grid, a);
    if (a.partial) mma_split_sum(l, a.partial, s.splits, x.rows, w.rows, out, bias);
#else
    (void)l, (void)w, (void)x, (void)out, (void)bias, (void)split;
#endif
}

void matmul_gated_mma(const Launch& l, Gated act, const Weights& gate, const Weights& up, const Rows& x,
                      const Rows& out) {
#if defined(EMBER_GPU_CUDA)
    const int bn = mma_dense_tile_tokens(l, gate.rows, x.rows, 32);
    MmaArgs a = dense_args(gate, x, out);
    a.w_up = up.data;
    a.act = act;
    const dim3 grid = mma_dense_grid(gate.rows, x.rows, bn);
    launch_mma<true>(l, gate.type, bn, grid, a);
#else
    (void)l, (void)act, (void)gate, (void)up, (void)x, (void)out;
#endif
}

int experts_mma_tile_slots(int64_t slots, int64_t n_experts) {
    // Tiles as wide as an expert's share of the slots, so that most experts decode their weights once.
    return slots >= 48 * n_experts ? 64 : 32;
}

void matmul_experts_mma(const Launch& l, const Weights& w, int64_t n_experts, const Rows& x, bool x_per_slot, int k,
                        const ExpertGroups& groups, int64_t slots, const Rows& out) {
#if defined(EMBER_GPU_CUDA)
    const int bn = experts_mma_tile_slots(slots, n_experts);
    const MmaArgs a = expert_args(w, n_experts, x, x_per_slot, k, groups, slots, out);
    launch_mma<false>(l, w.type, bn, mma_expert_grid(a.rows, slots, n_experts, bn), a);
#else
    (void)l, (void)w, (void)n_experts, (void)x, (void)x_per_slot, (void)k, (void)groups, (void)slots, (void)out;
#endif
}

void matmul_experts_gated_mma(const Launch& l, Gated act, const Weights& gate, const Weights& up, int64_t n_experts,
                              const Rows& x, bool x_per_slot, int k, const ExpertGroups& groups, int64_t slots,
                              const Rows& out) {
#if defined(EMBER_GPU_CUDA)
    MmaArgs a = expert_args(gate, n_experts, x, x_per_slot, k, groups, slots, out);
    a.w_up = up.data;
    a.act = act;
    launch_mma<true>(l, gate.type, kGatedMmaTileSlots, mma_expert_grid(a.rows, slots, n_experts, kGatedMmaTileSlots),
                     a);
#else
    (void)l, (void)act, (void)gate, (void)up, (void)n_experts, (void)x, (void)x_per_slot, (void)k, (void)groups,
        (void)slots, (void)out;
#endif
}

namespace {

// out[t, r] = the split products' parts added in split order, plus the bias.
__global__ void split_sum_kernel(const float* partial, int splits, int64_t tokens, int64_t rows, float* out,
                                 int64_t out_stride, const float* bias) {
    gpu::join_prior_grid();
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= tokens * rows) return;
    const int64_t t = i / rows, r = i % rows;
    float sum = partial[i];
    for (int z = 1; z < splits; ++z) sum += partial[z * tokens * rows + i];
    out[t * out_stride + r] = sum + (bias ? bias[r] : 0.0f);
}

}  // namespace

void mma_split_sum(const Launch& l, const float* partial, int splits, int64_t tokens, int64_t rows, const Rows& out,
                   const float* bias) {
    const int64_t n = tokens * rows;
    launch_kernel(l, split_sum_kernel, static_cast<unsigned>((n + 255) / 256), 256, 0, partial, splits, tokens, rows,
                  out.data, out.stride, bias);
}

}  // namespace ember::gpu_kernels
