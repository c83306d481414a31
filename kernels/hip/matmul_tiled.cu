// SPDX-License-Identifier: MIT
// Matrix products of many tokens (prefill, and experts with many routed tokens). A block computes a tile of
// BM weight rows x BN tokens: per step of 32 inputs it decodes the weight tile into shared memory as floats
// (decode32, any type), stages the activations beside it, and each of its 256 threads accumulates a 4 x 4
// sub-tile. The expert form first groups the slots by expert and cuts each expert's slots into tiles of BN, one
// block per (tile, BM weight rows).
// Block-quantized weights on a device with tensor cores take matmul_mma.cu's tiles instead.
#include "expert_tiles.cuh"
#include "kernel_launch.cuh"
#include "matmul_mma.cuh"
#include "matvec_common.cuh"

namespace ember::gpu_kernels {

namespace {

constexpr int kThreads = 256;

// Chunk c of a row whose last chunk may be partial: float types only (block types always fill their chunks);
// decode32 would read past the row's end there.
template <int T>
__device__ __forceinline__ void decode_chunk(const uint8_t* row, int64_t c, int64_t cols, float (&w)[32]) {
    if constexpr (T == kF32 || T == kF16 || T == kBF16) {
        if (32 * c + 32 > cols) {
            for (int i = 0; i < 32; ++i) {
                const int64_t k = 32 * c + i;
                float v = 0.0f;
                if (k < cols) {
                    if constexpr (T == kF32)
                        v = reinterpret_cast<const float*>(row)[k];
                    else if constexpr (T == kF16)
                        v = half_to_float(reinterpret_cast<const uint16_t*>(row)[k]);
                    else
                        v = gpu::bf16_to_float(reinterpret_cast<const uint16_t*>(row)[k]);
                }
                w[i] = v;
            }
            return;
        }
    }
    decode32<T>(row, c, w);
}

// The block's tokens: load_token_tile (expert_tiles.cuh).
template <int T, int BN>
__global__ __launch_bounds__(kThreads) void tiled_kernel(const uint8_t* w, size_t row_stride, int64_t rows,
                                                         int64_t cols, const float* x, int64_t x_stride,
                                                         bool x_per_slot, int k, ExpertGroups groups, int64_t tokens,
                                                         float* out, int64_t out_stride, const float* bias) {
    gpu::join_prior_grid();
    constexpr int BM = 4096 / BN;
    constexpr int kTx = BN / 4;  // threads along tokens
    __shared__ __align__(16) float ws[32][BM];
    __shared__ __align__(16) float xs[32][BN + 4];
    __shared__ int64_t x_row[BN];
    __shared__ int64_t out_row[BN];

    const int tid = threadIdx.x;
    const int tx = tid % kTx, ty = tid / kTx;
    const int64_t m0 = static_cast<int64_t>(blockIdx.x) * BM;
    int expert = 0;
    const int n = load_token_tile<BN>(groups, tokens, x_per_slot, k, x_row, out_row, expert);
    if (n <= 0) return;
    const uint8_t* wbase = w + static_cast<size_t>(expert) * static_cast<size_t>(rows) * row_stride;
    const int64_t chunks = (cols + 31) / 32;  // float types may end mid-chunk
    float acc[4][4] = {};
    for (int64_t c = 0; c < chunks; ++c) {
        __syncthreads();
        for (int r = tid; r < BM; r += kThreads) {
            float v[32];
            if (m0 + r < rows) {
                decode_chunk<T>(wbase + (m0 + r) * row_stride, c, cols, v);
            } else {
#pragma unroll
                for (int i = 0; i < 32; ++i) v[i] = 0.0f;
            }
#pragma unroll
            for (int i = 0; i < 32; ++i) ws[i][r] = v[i];
        }
        for (int e = tid; e < BN * 32; e += kThreads) {
            const int t = e / 32, kk = e % 32;
            const int64_t xr = x_row[t];
            xs[kk][t] = xr >= 0 && 32 * c + kk < cols ? x[xr * x_stride + 32 * c + kk] : 0.0f;
        }
        __syncthreads();
#pragma unroll 8
        for (int kk = 0; kk < 32; ++kk) {
            const float4 wv = *reinterpret_cast<const float4*>(&ws[kk][4 * ty]);
            const float4 xv = *reinterpret_cast<const float4*>(&xs[kk][4 * tx]);
            const float wr[4] = {wv.x, wv.y, wv.z, wv.w};
            const float xr[4] = {xv.x, xv.y, xv.z, xv.w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += wr[i] * xr[j];
        }
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int t = 4 * tx + j;
        if (t >= n) continue;
        const int64_t o = out_row[t];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int64_t r = m0 + 4 * ty + i;
            if (r < rows) out[o * out_stride + r] = acc[i][j] + (bias ? bias[r] : 0.0f);
        }
    }
}

// Inclusive prefix sums of a and b over the lanes of a warp (lane: this thread's).
__device__ __forceinline__ void warp_inclusive_scan2(int& a, int& b, int lane) {
#pragma unroll
    for (int d = 1; d < gpu::kWarpSize; d <<= 1) {
        const int oa = gpu::shuffle_up(a, d), ob = gpu::shuffle_up(b, d);
        if (lane >= d) {
            a += oa;
            b += ob;
        }
    }
}

// Exclusive prefix sums of two counts over the threads of a block, in thread order, and their totals (every thread
// gets them). blockDim.x: a multiple of the warp size, at most 1024.
__device__ void block_exclusive_scan2(int& a, int& b, int& total_a, int& total_b) {
    constexpr int W = gpu::kWarpSize;
    __shared__ int warp_a[1024 / W], warp_b[1024 / W];
    const int lane = static_cast<int>(threadIdx.x) % W, warp = static_cast<int>(threadIdx.x) / W;
    const int warps = static_cast<int>(blockDim.x) / W;
    int ia = a, ib = b;  // inclusive sums within the warp
    warp_inclusive_scan2(ia, ib, lane);
    if (lane == W - 1) {
        warp_a[warp] = ia;
        warp_b[warp] = ib;
    }
    __syncthreads();
    if (warp == 0) {  // the warps' totals, scanned by the first warp (at most W of them)
        int wa = lane < warps ? warp_a[lane] : 0, wb = lane < warps ? warp_b[lane] : 0;
        warp_inclusive_scan2(wa, wb, lane);
        if (lane < warps) {
            warp_a[lane] = wa;
            warp_b[lane] = wb;
        }
    }
    __syncthreads();
    total_a = warp_a[warps - 1];
    total_b = warp_b[warps - 1];
    a = (warp > 0 ? warp_a[warp - 1] : 0) + ia - a;
    b = (warp > 0 ? warp_b[warp - 1] : 0) + ib - b;
}

// One block: counts slots per expert, prefix sums them, lists each expert's slots, and cuts them into tiles of
// tile_slots (ExpertGroups), tiles in expert order. Slots whose id is out of range get a zero output row. Thread i
// owns a run of consecutive experts; a block-wide scan of the runs' slot and tile counts places every run at once.
__global__ void group_slots_kernel(const int32_t* ids, int64_t slots, int64_t n_experts, int tile_slots,
                                   int32_t* offsets, int32_t* cursor, int32_t* list, int32_t* tiles,
                                   int32_t* tile_count, float* out, int64_t out_stride, int64_t out_cols) {
    gpu::join_prior_grid();
    for (int64_t e = threadIdx.x; e <= n_experts; e += blockDim.x) {
        offsets[e] = 0;
        if (e < n_experts) cursor[e] = 0;
    }
    __syncthreads();
    for (int64_t s = threadIdx.x; s < slots; s += blockDim.x) {
        const int32_t e = ids[s];
        if (e >= 0 && e < n_experts) {
            atomicAdd(&offsets[e + 1], 1);
        } else {
            for (int64_t c = 0; c < out_cols; ++c) out[s * out_stride + c] = 0.0f;
        }
    }
    __syncthreads();
    const int64_t per_thread = (n_experts + blockDim.x - 1) / blockDim.x;
    const int64_t e0 = threadIdx.x * per_thread;
    const int64_t e1 = e0 + per_thread < n_experts ? e0 + per_thread : n_experts;
    int start = 0, first_tile = 0;  // this run's slot and tile counts, then where they begin
    for (int64_t e = e0; e < e1; ++e) {
        const int n = offsets[e + 1];
        start += n;
        first_tile += (n + tile_slots - 1) / tile_slots;
    }
    int total_slots = 0, total_tiles = 0;
    block_exclusive_scan2(start, first_tile, total_slots, total_tiles);
    int tile = first_tile;
    for (int64_t e = e0; e < e1; ++e) {  // only this thread reads or writes offsets[e + 1] of its run
        const int end = start + offsets[e + 1];
        for (int first = start; first < end; first += tile_slots) {
            tiles[2 * tile] = static_cast<int32_t>(e);
            tiles[2 * tile + 1] = first;
            ++tile;
        }
        offsets[e + 1] = end;
        start = end;
    }
    if (threadIdx.x == 0) *tile_count = total_tiles;
    __syncthreads();
    for (int64_t s = threadIdx.x; s < slots; s += blockDim.x) {
        const int32_t e = ids[s];
        if (e >= 0 && e < n_experts) list[offsets[e] + atomicAdd(&cursor[e], 1)] = static_cast<int32_t>(s);
    }
}

}  // namespace

bool weight_type_supported(uint32_t type) {
    bool known = false;
    dispatch_weight_type(type, [&]<int T>() { known = T >= 0; });
    return known;
}

size_t matmul_tiled_scratch_bytes(const Launch& l, const Weights& w, int64_t tokens) {
    return mma_available(l, w.type) ? matmul_mma_split_bytes(l, w, tokens) : 0;
}

void matmul_tiled(const Launch& l, const Weights& w, const Rows& x, const Rows& out, const float* bias, void* scratch) {
    if (mma_available(l, w.type)) {
        matmul_mma(l, w, x, out, bias, scratch);
        return;
    }
    constexpr int BN = 64, BM = 4096 / BN;
    const dim3 grid(static_cast<unsigned>((w.rows + BM - 1) / BM), static_cast<unsigned>((x.rows + BN - 1) / BN));
    dispatch_weight_type(w.type, [&]<int T>() {
        launch_kernel(l, tiled_kernel<T, BN>, grid, kThreads, 0, w.data, w.row_stride, w.rows, w.cols, x.data, x.stride,
                      false, 1, ExpertGroups{}, x.rows, out.data, out.stride, bias);
    });
}

// The grouped products' scalar tiles; the tensor-core ones are wider (experts_mma_tile_slots).
constexpr int kExpertTileSlots = 16;

size_t expert_group_bytes(int64_t n_experts, int64_t slots) {
    // offsets, cursor, list, the tile count and the tiles (two words each), for the narrowest tiles
    const int64_t tiles = max_expert_tiles(slots, n_experts, kMatvecExpertTileSlots);
    return static_cast<size_t>(2 * n_experts + 1 + slots + 1 + 2 * tiles) * sizeof(int32_t);
}

ExpertGroups group_expert_slots(const Launch& l, const int32_t* ids, int64_t slots, int64_t n_experts, int tile_slots,
                                void* scratch, const Rows& out) {
    auto* offsets = static_cast<int32_t*>(scratch);
    int32_t* cursor = offsets + n_experts + 1;
    int32_t* list = cursor + n_experts;
    int32_t* tile_count = list + slots;
    int32_t* tiles = tile_count + 1;
    launch_kernel(l, group_slots_kernel, 1, 1024, 0, ids, slots, n_experts, tile_slots, offsets, cursor, list, tiles,
                  tile_count, out.data, out.stride, out.cols);
    return ExpertGroups{offsets, list, tiles, tile_count};
}

void matmul_experts_grouped(const Launch& l, const Weights& w, int64_t n_experts, const Rows& x, bool x_per_slot,
                            const int32_t* ids, int64_t tokens, int k, const Rows& out, void* scratch) {
    constexpr int BN = kExpertTileSlots, BM = 4096 / BN;
    const int64_t rows = w.rows / n_experts;
    const int64_t slots = tokens * k;
    const bool mma = mma_available(l, w.type);
    const int tile_slots = mma ? experts_mma_tile_slots(slots, n_experts) : BN;
    const ExpertGroups groups = group_expert_slots(l, ids, slots, n_experts, tile_slots, scratch, out);
    if (mma) {
        matmul_experts_mma(l, w, n_experts, x, x_per_slot, k, groups, slots, out);
        return;
    }
    // Blocks past the tile count that the grouping found return at once.
    const dim3 grid(static_cast<unsigned>((rows + BM - 1) / BM),
                    static_cast<unsigned>(max_expert_tiles(slots, n_experts, BN)));
    dispatch_weight_type(w.type, [&]<int T>() {
        launch_kernel(l, tiled_kernel<T, BN>, grid, kThreads, 0, w.data, w.row_stride, rows, w.cols, x.data, x.stride,
                      x_per_slot, k, groups, slots, out.data, out.stride, nullptr);
    });
}

void matmul_gated_tiled(const Launch& l, Gated act, const Weights& gate, const Weights& up, const Rows& x,
                        const Rows& up_scratch, const Rows& out) {
    if (mma_gated_available(l, gate, up)) return matmul_gated_mma(l, act, gate, up, x, out);
    matmul_tiled(l, gate, x, out, nullptr);
    matmul_tiled(l, up, x, up_scratch, nullptr);
    gated_activation(l, act, out, up_scratch, out);
}

void matmul_experts_gated_grouped(const Launch& l, Gated act, const Weights& gate, const Weights& up,
                                  int64_t n_experts, const Rows& x, bool x_per_slot, const int32_t* ids,
                                  int64_t tokens, int k, const Rows& up_scratch, const Rows& out, void* scratch) {
    if (!mma_gated_available(l, gate, up)) {
        matmul_experts_grouped(l, gate, n_experts, x, x_per_slot, ids, tokens, k, out, scratch);
        matmul_experts_grouped(l, up, n_experts, x, x_per_slot, ids, tokens, k, up_scratch, scratch);
        return gated_activation(l, act, out, up_scratch, out);
    }
    const int64_t slots = tokens * k;
    const ExpertGroups groups = group_expert_slots(l, ids, slots, n_experts, kGatedMmaTileSlots, scratch, out);
    matmul_experts_gated_mma(l, act, gate, up, n_experts, x, x_per_slot, k, groups, slots, out);
}

}  // namespace ember::gpu_kernels
