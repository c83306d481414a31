// SPDX-License-Identifier: MIT
// What the tensor-core tile kernels (matmul_mma.cu on f16/TF32 operands, matmul_int8_mma.cu on int8) share: a block
// of 8 warps over 128 weight rows x BN tokens, the warps' sub-tiles, the ldmatrix fragment load, the store of a
// finished tile, and the grids.
#pragma once

#include "activations.cuh"
#include "expert_tiles.cuh"

namespace ember::gpu_kernels {

inline constexpr int kMmaThreads = 256;
inline constexpr int kMmaRows = 128;  // weight rows per block

// The warps' layout for BN tokens: kWarpsM x kWarpsN warps, each over kWarpRows x kWarpCols outputs in MT x NT
// products of 16 rows x 8 tokens.
template <int BN>
struct MmaWarpTile {
    static constexpr int kWarpsN = BN >= 32 ? 2 : 1, kWarpsM = 8 / kWarpsN;
    static constexpr int kWarpRows = kMmaRows / kWarpsM, kWarpCols = BN / kWarpsN;
    static constexpr int MT = kWarpRows / 16, NT = kWarpCols / 8;
};

#if defined(EMBER_GPU_CUDA)
// Four 8 x 8 matrices of 16-bit values (or pairs of int8) from shared memory, one register each: lane i gives the
// address of row i % 8 of matrix i / 8 (16 bytes, 16-byte aligned), and receives row i / 4, bytes 4 (i % 4) ..
// 4 (i % 4) + 3 of each matrix: the fragment layout of the m16n8k16 (f16) and m16n8k32 (int8) operands, loaded in one
// instruction instead of four.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const uint32_t* row) {
#if __CUDA_ARCH__ >= 800
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(row));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
#else
    (void)row;
    r[0] = r[1] = r[2] = r[3] = 0u;
    __trap();  // the host launches these kernels only on sm_80 and later
#endif
}

// Where a finished tile goes: out[out_row[col], r] (+ bias[r], or act(gate, up) of the two matrices when gated), or,
// for a part of a product split along the inputs, partial[part, out_row[col], r] with tokens rows per part.
struct MmaTileOut {
    float* out = nullptr;
    int64_t out_stride = 0;
    const float* bias = nullptr;
    Gated act = Gated::silu;
    float* partial = nullptr;
    int64_t part = 0, tokens = 0;
};

// Lane (g, t) of warp (wm, wn) holds acc[mat][mt][nt][i] for row m0 + wm * kWarpRows + mt * 16 + g (+ 8 for i >= 2)
// and token wn * kWarpCols + nt * 8 + 2 t + (i & 1); tokens from n on and rows from `rows` on are not stored.
template <int BN, int MATS, bool GATED>
__device__ __forceinline__ void store_mma_tile(
    const float (&acc)[MATS][MmaWarpTile<BN>::MT][MmaWarpTile<BN>::NT][4], int wm, int wn, int g, int t, int64_t m0,
    int64_t rows, int n, const int64_t* out_row, const MmaTileOut& o) {
    using W = MmaWarpTile<BN>;
#pragma unroll
    for (int mt = 0; mt < W::MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < W::NT; ++nt)
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int col = wn * W::kWarpCols + nt * 8 + 2 * t + (i & 1);
                const int64_t r = m0 + wm * W::kWarpRows + mt * 16 + g + (i >= 2 ? 8 : 0);
                if (col >= n || r >= rows) continue;
                if (o.partial) {
                    o.partial[(o.part * o.tokens + out_row[col]) * rows + r] = acc[0][mt][nt][i];
                    continue;
                }
                float* dst = o.out + out_row[col] * o.out_stride + r;
                if constexpr (GATED)
                    *dst = gated(o.act, acc[0][mt][nt][i], acc[MATS - 1][mt][nt][i]);
                else
                    *dst = acc[0][mt][nt][i] + (o.bias ? o.bias[r] : 0.0f);
            }
}
#endif  // EMBER_GPU_CUDA

// Calls f.template operator()<BN>() for the token tile width: 64 (not gated), 32 or 16.
template <bool GATED, typename F>
void with_mma_tile_tokens(int bn, F&& f) {
    if constexpr (!GATED) {
        if (bn == 64) return f.template operator()<64>();
    }
    if (bn >= 32)
        f.template operator()<32>();
    else
        f.template operator()<16>();
}

// The widest token tiles (at most max_bn) that still give every multiprocessor a block: few weight rows (gates,
// small projections) or few tokens take narrower tiles, which decode the weights more often but run in parallel.
inline int mma_dense_tile_tokens(const Launch& l, int64_t rows, int64_t tokens, int max_bn) {
    const int64_t row_blocks = (rows + kMmaRows - 1) / kMmaRows;
    int bn = max_bn;
    while (bn > 16 && row_blocks * ((tokens + bn - 1) / bn) < l.multiprocessors) bn /= 2;
    return bn;
}

// A dense product's tiles: the token width (mma_dense_tile_tokens), and the split along the inputs that gives every
// multiprocessor about two blocks where the tiles alone are too few (small products such as a router or a gate over a
// long prompt); each part keeps at least 8 of the product's `steps` shared-memory steps.
struct MmaSplit {
    int bn = 64;
    int splits = 1;
    int64_t split_steps = 0;  // 0: no split
};

inline MmaSplit mma_dense_split(const Launch& l, int64_t rows, int64_t tokens, int64_t steps, int max_bn) {
    constexpr int64_t kMinSplitSteps = 8;
    MmaSplit s;
    s.bn = mma_dense_tile_tokens(l, rows, tokens, max_bn);
    const int64_t blocks = (rows + kMmaRows - 1) / kMmaRows * ((tokens + s.bn - 1) / s.bn);
    const int64_t want = (2 * l.multiprocessors + blocks - 1) / blocks;
    const int64_t splits = want < steps / kMinSplitSteps ? want : steps / kMinSplitSteps;
    if (splits < 2) return s;
    s.split_steps = (steps + splits - 1) / splits;
    s.splits = static_cast<int>((steps + s.split_steps - 1) / s.split_steps);
    return s;
}

inline size_t mma_split_bytes(const MmaSplit& s, int64_t tokens, int64_t rows) {
    return s.splits > 1 ? static_cast<size_t>(s.splits * tokens * rows) * sizeof(float) : 0;
}

inline dim3 mma_dense_grid(int64_t rows, int64_t tokens, int bn) {
    return dim3(static_cast<unsigned>((rows + kMmaRows - 1) / kMmaRows), static_cast<unsigned>((tokens + bn - 1) / bn));
}

// Blocks past the tile count that the grouping found return at once.
inline dim3 mma_expert_grid(int64_t rows, int64_t slots, int64_t n_experts, int bn) {
    return dim3(static_cast<unsigned>((rows + kMmaRows - 1) / kMmaRows),
                static_cast<unsigned>(max_expert_tiles(slots, n_experts, bn)));
}

}  // namespace ember::gpu_kernels
