// SPDX-License-Identifier: MIT
// Tensor-core tiles on 8-bit integers (kernels.h, int8_tiles_available): the weight types of the integer mat x vec
// (ROCmFP4 dual and FAST, MXFP4, Q4_0, Q8_0) times activations quantized as quantize_q8_1 writes them. A block of 8
// warps computes 128 weight rows x BN tokens; per step of two weight blocks (64 inputs) the threads expand the codes to
// int8 in shared memory (no conversion to f16: a code is its own integer) beside the tokens' int8 blocks, and each
// warp multiplies its sub-tile with m16n8k32 integer products (two m16n8k16 for ROCmFP4 dual, whose halves have their
// own scales), exact in int32, then adds product x weight scale x activation scale in f32 block by block.
#include "kernel_launch.cuh"
#include "matmul_mma.cuh"
#include "matvec_common.cuh"
#include "mma_tiles.cuh"

namespace ember::gpu_kernels {

#if defined(EMBER_GPU_CUDA)

namespace {

constexpr int kThreads = kMmaThreads;
constexpr int kRows = kMmaRows;
constexpr int kStepBlocks = 2;   // weight blocks (32 inputs each) per shared-memory step
constexpr int kRowWords = 20;    // words per shared row: 16 of int8 codes, 4 of padding (conflict-free ldmatrix)

template <int T>
inline constexpr bool kInt8TileType = integer_path(T);

// d += a (16 x 32, row) . b (32 x 8, col), int8 inputs, int32 sums (exact).
__device__ __forceinline__ void mma_16x8x32_s8(int (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    __trap();  // the host launches these kernels only on sm_80 and later
#endif
}

// The same over 16 inputs: a holds rows g and g + 8, b one register.
__device__ __forceinline__ void mma_16x8x16_s8(int (&d)[4], uint32_t a0, uint32_t a1, uint32_t b) {
#if __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a0), "r"(a1), "r"(b));
#else
    __trap();
#endif
}

struct Int8TileArgs {
    const uint8_t* w = nullptr;
    const uint8_t* w_up = nullptr;  // gated: act(w . x, w_up . x)
    size_t row_stride = 0;
    int64_t rows = 0;
    int nb = 0;  // weight blocks per row
    const ActBlock* xq = nullptr;  // x rows of nb blocks
    bool x_per_slot = false;
    int k = 1;
    ExpertGroups groups;
    int64_t tokens = 0;
    float* out = nullptr;
    int64_t out_stride = 0;
    const float* bias = nullptr;
    Gated act = Gated::silu;
    int64_t split_steps = 0;  // as MmaArgs: a part of the steps into partial (dense, not gated)
    float* partial = nullptr;
};

template <int T, int BN, bool GATED>
__global__ __launch_bounds__(kThreads, 2) void int8_tile_kernel(Int8TileArgs a) {
    gpu::join_prior_grid();
    constexpr int kMats = GATED ? 2 : 1;
    constexpr int kBytes = kIntegerBlockBytes<T>;
    using Warps = MmaWarpTile<BN>;
    constexpr int kWarpsN = Warps::kWarpsN, kWarpRows = Warps::kWarpRows, kWarpCols = Warps::kWarpCols;
    constexpr int MT = Warps::MT, NT = Warps::NT;
    static_assert(NT % 2 == 0, "B fragments are loaded two token tiles at a time");
    // Activation words per step: per token and block, d then the 8 code words (s is not needed: the weights are
    // signed), fetched as 9 words of the 10 of an ActBlock.
    constexpr int kXUnits = BN * kStepBlocks * 9;
    constexpr int kXPerThread = (kXUnits + kThreads - 1) / kThreads;
    __shared__ __align__(16) uint32_t ws[kMats][kRows][kRowWords];
    __shared__ float wscale[kMats][kRows][kStepBlocks][2];
    __shared__ __align__(16) uint32_t xs[BN][kRowWords];
    __shared__ float xd[BN][kStepBlocks];
    __shared__ int64_t x_row[BN];
    __shared__ int64_t out_row[BN];

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / kWarpsN, wn = warp % kWarpsN;
    const int g = lane >> 2, t = lane & 3;
    const int64_t m0 = static_cast<int64_t>(blockIdx.x) * kRows;
    int expert = 0;
    const int n = load_token_tile<BN>(a.groups, a.tokens, a.x_per_slot, a.k, x_row, out_row, expert);
    if (n <= 0) return;
    const size_t expert_offset = static_cast<size_t>(expert) * static_cast<size_t>(a.rows) * a.row_stride;
    const int all_steps = (a.nb + kStepBlocks - 1) / kStepBlocks;
    const int first_step = a.split_steps ? static_cast<int>(blockIdx.z * a.split_steps) : 0;
    const int steps = a.split_steps ? min(all_steps, first_step + static_cast<int>(a.split_steps)) : all_steps;
    // Each thread fetches one weight block of each matrix per step (row tid % 128, block tid / 128 of the step) and
    // kXPerThread activation words; the next step's fetch is issued before this step's products.
    const int wr_row = tid % kRows, wr_block = tid / kRows;
    const bool row_ok = m0 + wr_row < a.rows;
    const uint8_t* wr_ptr[kMats];
    wr_ptr[0] = a.w + expert_offset + (m0 + wr_row) * a.row_stride;
    if constexpr (GATED) wr_ptr[kMats - 1] = a.w_up + expert_offset + (m0 + wr_row) * a.row_stride;
    gpu::UnalignedWords<kBytes> raw[kMats];
    bool raw_ok = false;
    uint32_t xw[kXPerThread];
    __syncthreads();  // x_row from load_token_tile
    const auto fetch = [&](int step) {
        const int b = step * kStepBlocks + wr_block;
        raw_ok = row_ok && b < a.nb;
#pragma unroll
        for (int u = 0; u < kMats; ++u)
            if (raw_ok) gpu::fetch_unaligned<kBytes>(wr_ptr[u] + static_cast<size_t>(b) * kBytes, raw[u]);
#pragma unroll
        for (int i = 0; i < kXPerThread; ++i) {
            const int e = tid + i * kThreads;
            xw[i] = 0u;
            if (e < kXUnits) {
                const int tok = e / (kStepBlocks * 9), blk = e / 9 % kStepBlocks, word = e % 9;
                const int64_t xr = x_row[tok];
                const int xb = step * kStepBlocks + blk;
                if (xr >= 0 && xb < a.nb) {
                    const uint32_t* src = reinterpret_cast<const uint32_t*>(a.xq + xr * a.nb + xb);
                    xw[i] = src[word == 0 ? 0 : word + 1];  // d, then the codes (past s)
                }
            }
        }
    };
    fetch(first_step);
    float acc[kMats][MT][NT][4] = {};
    for (int step = first_step; step < steps; ++step) {
        __syncthreads();  // the previous step's products are done with the shared tiles
#pragma unroll
        for (int u = 0; u < kMats; ++u) {
            uint32_t v[8] = {};
            float s0 = 0.0f, s1 = 0.0f;
            if (raw_ok) {
                uint32_t words[(kBytes + 3) / 4];
                gpu::align_unaligned<kBytes>(raw[u], words);
                const IntegerBlock blk = expand_integer_block<T>(words);
#pragma unroll
                for (int i = 0; i < 8; ++i)  // Q4_0's codes 0..15 stand for -8..7
                    v[i] = T == kQ4_0 ? __vsub4(static_cast<uint32_t>(blk.v[i]), 0x08080808u)
                                      : static_cast<uint32_t>(blk.v[i]);
                s0 = blk.s0;
                s1 = blk.s1;
            }
            uint4* dst = reinterpret_cast<uint4*>(&ws[u][wr_row][8 * wr_block]);
            dst[0] = make_uint4(v[0], v[1], v[2], v[3]);
            dst[1] = make_uint4(v[4], v[5], v[6], v[7]);
            wscale[u][wr_row][wr_block][0] = s0;
            wscale[u][wr_row][wr_block][1] = s1;
        }
#pragma unroll
        for (int i = 0; i < kXPerThread; ++i) {
            const int e = tid + i * kThreads;
            if (e < kXUnits) {
                const int tok = e / (kStepBlocks * 9), blk = e / 9 % kStepBlocks, word = e % 9;
                if (word == 0)
                    xd[tok][blk] = __uint_as_float(xw[i]);
                else
                    xs[tok][8 * blk + word - 1] = xw[i];
            }
        }
        __syncthreads();
        if (step + 1 < steps) fetch(step + 1);
        const int lq = lane >> 3, lr = lane & 7;
#pragma unroll
        for (int kb = 0; kb < kStepBlocks; ++kb) {
            // B: per token tile pair, matrices (tile, inputs 0-15), (tile, 16-31), (next tile, 0-15), (next, 16-31).
            uint32_t b[NT][2];
#pragma unroll
            for (int np = 0; np < NT; np += 2) {
                uint32_t r[4];
                ldmatrix_x4(r, &xs[wn * kWarpCols + np * 8 + 8 * (lq >> 1) + lr][8 * kb + 4 * (lq & 1)]);
                b[np][0] = r[0];
                b[np][1] = r[1];
                b[np + 1][0] = r[2];
                b[np + 1][1] = r[3];
            }
            float d[NT][2];
#pragma unroll
            for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                for (int j = 0; j < 2; ++j) d[nt][j] = xd[wn * kWarpCols + nt * 8 + 2 * t + j][kb];
#pragma unroll
            for (int u = 0; u < kMats; ++u) {
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    // A: matrices (rows 0-7, inputs 0-15), (rows 8-15, 0-15), (rows 0-7, 16-31), (rows 8-15, 16-31).
                    const int r0 = wm * kWarpRows + mt * 16;
                    uint32_t fa[4];
                    ldmatrix_x4(fa, &ws[u][r0 + 8 * (lq & 1) + lr][8 * kb + 4 * (lq >> 1)]);
                    const float sa0 = wscale[u][r0 + g][kb][0], sb0 = wscale[u][r0 + g + 8][kb][0];
#pragma unroll
                    for (int nt = 0; nt < NT; ++nt) {
                        if constexpr (T == kRocmfp4) {
                            const float sa1 = wscale[u][r0 + g][kb][1], sb1 = wscale[u][r0 + g + 8][kb][1];
                            int lo[4] = {}, hi[4] = {};
                            mma_16x8x16_s8(lo, fa[0], fa[1], b[nt][0]);
                            mma_16x8x16_s8(hi, fa[2], fa[3], b[nt][1]);
#pragma unroll
                            for (int i = 0; i < 4; ++i) {
                                const float w0 = i < 2 ? sa0 : sb0, w1 = i < 2 ? sa1 : sb1;
                                const float part = w0 * static_cast<float>(lo[i]) + w1 * static_cast<float>(hi[i]);
                                acc[u][mt][nt][i] += d[nt][i & 1] * part;
                            }
                        } else {
                            int c[4] = {};
                            mma_16x8x32_s8(c, fa, b[nt]);
#pragma unroll
                            for (int i = 0; i < 4; ++i)
                                acc[u][mt][nt][i] += (i < 2 ? sa0 : sb0) * d[nt][i & 1] * static_cast<float>(c[i]);
                        }
                    }
                }
            }
        }
    }
    const MmaTileOut o{.out = a.out, .out_stride = a.out_stride, .bias = a.bias, .act = a.act, .partial = a.partial,
                       .part = blockIdx.z, .tokens = a.tokens};
    store_mma_tile<BN, kMats, GATED>(acc, wm, wn, g, t, m0, a.rows, n, out_row, o);
}

// Launches int8_tile_kernel<T, BN, GATED> for the type, BN one of 64, 32, 16 (GATED: 32 or 16).
template <bool GATED>
void launch_int8_tiles(const Launch& l, uint32_t type, int bn, dim3 grid, const Int8TileArgs& a) {
    dispatch_integer_type(type, [&]<int T>() {
        if constexpr (kInt8TileType<T>)
            with_mma_tile_tokens<GATED>(
                bn, [&]<int BN>() { launch_kernel(l, int8_tile_kernel<T, BN, GATED>, grid, kThreads, 0, a); });
    });
}

// ROCmFP4 dual's two scales per block double the f32 work per integer product: its tiles stay at 32 tokens, where
// the accumulators fit the registers of two blocks per multiprocessor (64 spilled).
int widest_int8_tile(uint32_t type, int bn) { return type == kRocmfp4 && bn > 32 ? 32 : bn; }

MmaSplit int8_dense_split(const Launch& l, const Weights& w, int64_t tokens) {
    const int64_t steps = (w.cols / 32 + kStepBlocks - 1) / kStepBlocks;
    return mma_dense_split(l, w.rows, tokens, steps, widest_int8_tile(w.type, 64));
}

Int8TileArgs int8_args(const Weights& w, int64_t rows, const void* xq, int64_t tokens, const Rows& out) {
    return {.w = w.data, .row_stride = w.row_stride, .rows = rows, .nb = static_cast<int>(w.cols / 32),
            .xq = static_cast<const ActBlock*>(xq), .tokens = tokens, .out = out.data, .out_stride = out.stride};
}

}  // namespace

#endif  // EMBER_GPU_CUDA

bool int8_tiles_available(const Launch& l, const Weights& w) {
#if defined(EMBER_GPU_CUDA)
    return integer_path(w.type) && w.cols % 32 == 0 && mma_available(l, w.type);
#else
    (void)l, (void)w;
    return false;
#endif
}

size_t int8_tiles_split_bytes(const Launch& l, const Weights& w, int64_t tokens) {
#if defined(EMBER_GPU_CUDA)
    return mma_split_bytes(int8_dense_split(l, w, tokens), tokens, w.rows);
#else
    (void)l, (void)w, (void)tokens;
    return 0;
#endif
}

void matmul_int8_tiles(const Launch& l, const Weights& w, const void* xq, int64_t tokens, const Rows& out,
                       const float* bias, void* split) {
#if defined(EMBER_GPU_CUDA)
    const MmaSplit s = int8_dense_split(l, w, tokens);
    Int8TileArgs a = int8_args(w, w.rows, xq, tokens, out);
    a.bias = bias;
    dim3 grid = mma_dense_grid(w.rows, tokens, s.bn);
    if (s.splits > 1 && split) {
        a.split_steps = s.split_steps;
        a.partial = static_cast<float*>(split);
        grid.z = static_cast<unsigned>(s.splits);
    }
    launch_int8_tiles<false>(l, w.type, s.bn, grid, a);
    if (a.partial) mma_split_sum(l, a.partial, s.splits, tokens, w.rows, out, bias);
#else
    (void)l, (void)w, (void)xq, (void)tokens, (void)out, (void)bias, (void)split;
#endif
}

void matmul_gated_int8_tiles(const Launch& l, Gated act, const Weights& gate, const Weights& up, const void* xq,
                             int64_t tokens, const Rows& out) {
#if defined(EMBER_GPU_CUDA)
    const int bn = mma_dense_tile_tokens(l, gate.rows, tokens, 32);
    Int8TileArgs a = int8_args(gate, gate.rows, xq, tokens, out);
    a.w_up = up.data;
    a.act = act;
    launch_int8_tiles<true>(l, gate.type, bn, mma_dense_grid(gate.rows, tokens, bn), a);
#else
    (void)l, (void)act, (void)gate, (void)up, (void)xq, (void)tokens, (void)out;
#endif
}

void matmul_experts_int8_tiles(const Launch& l, const Weights& w, int64_t n_experts, const void* xq, bool x_per_slot,
                               const int32_t* ids, int64_t tokens, int k, const Rows& out, void* scratch) {
#if defined(EMBER_GPU_CUDA)
    const int64_t slots = tokens * k, rows = w.rows / n_experts;
    const int bn = widest_int8_tile(w.type, experts_mma_tile_slots(slots, n_experts));
    Int8TileArgs a = int8_args(w, rows, xq, slots, out);
    a.x_per_slot = x_per_slot;
    a.k = k;
    a.groups = group_expert_slots(l, ids, slots, n_experts, bn, scratch, out);
    launch_int8_tiles<false>(l, w.type, bn, mma_expert_grid(rows, slots, n_experts, bn), a);
#else
    (void)l, (void)w, (void)n_experts, (void)xq, (void)x_per_slot, (void)ids, (void)tokens, (void)k, (void)out,
        (void)scratch;
#endif
}

void matmul_experts_gated_int8_tiles(const Launch& l, Gated act, const Weights& gate, const Weights& up,
                                     int64_t n_experts, const void* xq, bool x_per_slot, const int32_t* ids,
                                     int64_t tokens, int k, const Rows& out, void* scratch) {
#if defined(EMBER_GPU_CUDA)
    const int64_t slots = tokens * k, rows = gate.rows / n_experts;
    Int8TileArgs a = int8_args(gate, rows, xq, slots, out);
    a.w_up = up.data;
    a.act = act;
    a.x_per_slot = x_per_slot;
    a.k = k;
    a.groups = group_expert_slots(l, ids, slots, n_experts, kGatedMmaTileSlots, scratch, out);
    launch_int8_tiles<true>(l, gate.type, kGatedMmaTileSlots,
                            mma_expert_grid(rows, slots, n_experts, kGatedMmaTileSlots), a);
#else
    (void)l, (void)act, (void)gate, (void)up, (void)n_experts, (void)xq, (void)x_per_slot, (void)ids, (void)tokens,
        (void)k, (void)out, (void)scratch;
#endif
}

}  // namespace ember::gpu_kernels
