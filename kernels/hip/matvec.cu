// SPDX-License-Identifier: MIT
// Mat x vec for decode and verify batches (up to 32 tokens), the memory-bound hot path. A group of LPR lanes owns one
// weight row; lane l walks blocks l, l + LPR, ... so that a group reads its row front to back. Each launch takes a run
// of at most 16 tokens (8 for the block types of the float path) and reads the weights once for all of them.
//   integer path (ROCmFP4 dual/FAST, Q4_0, Q8_0): activations quantized once to Q8_1-style blocks, weights
//     expanded to int8 (ROCmFP4 through byte-permute codebook lookups, rocmfp4.md §7.2), 4 x int8 dot products;
//   float path (every other type): float weights read column-interleaved, block types through decode32; fp32 dot
//     products.
// The expert forms pick each slot's matrix from ids on the device: per slot for one token, and for a verify batch
// grouped by expert, so that an expert's rows are read once for every slot routed to it (the same sums as per slot).
#include "activation_blocks.cuh"
#include "activations.cuh"
#include "expert_tiles.cuh"
#include "kernel_launch.cuh"
#include "matvec_common.cuh"
#include "norm_rows.cuh"

namespace ember::gpu_kernels {

namespace {

// One warp lane per activation: 32 lanes quantize a block together (rows of whole blocks).
__global__ void quantize_q8_1_kernel(const float* x, int64_t rows, int64_t cols, int64_t stride, ActBlock* out) {
    gpu::join_prior_grid();
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int64_t nb = cols / 32, block = i / 32;
    if (block >= rows * nb) return;  // whole groups of 32 lanes leave together
    const int64_t r = block / nb, c = (block % nb) * 32 + i % 32;
    quantize_activation_block(x[r * stride + c], static_cast<int>(i % 32), out + block);
}

template <int T, int NT, int LPR>
__global__ void matvec_integer_kernel(const uint8_t* w, size_t row_stride, int64_t rows, int nb, const ActBlock* x,
                                      float* out, int64_t out_stride, const float* bias, NormTail norm) {
    prefetch_block_rows<LPR>(w, row_stride, rows);
    gpu::join_prior_grid();
    const int lane = row_lane<LPR>();
    const int64_t row = lane_group_row<LPR>();
    float acc[NT] = {};
    if (row < rows) integer_row<T, NT, LPR>(w + row * row_stride, nb, x, nb, lane, acc);
    store_row_sums<NT, LPR>(acc, lane, row, rows, out, out_stride, bias);
    if (norm.counter) add_rms_norm_in_last_block(norm);
}

// Gate row and up row of a gated product against NT tokens, walked together; each sum in integer_row's order, so the
// fused kernels below round exactly as two products and a gated activation do.
template <int T, int NT, int LPR>
__device__ __forceinline__ void integer_row_pair(const uint8_t* gate_row, const uint8_t* up_row, int nb,
                                                 const ActBlock* x, int64_t x_step, int lane, float (&g)[NT],
                                                 float (&u)[NT]) {
    for (int b = lane; b < nb; b += LPR) {
        const IntegerBlock gb = load_integer_block<T>(gate_row + static_cast<size_t>(b) * kIntegerBlockBytes<T>);
        const IntegerBlock ub = load_integer_block<T>(up_row + static_cast<size_t>(b) * kIntegerBlockBytes<T>);
#pragma unroll
        for (int t = 0; t < NT; ++t) {
            g[t] += integer_dot<T>(gb, x[b + t * x_step]);
            u[t] += integer_dot<T>(ub, x[b + t * x_step]);
        }
    }
}

// out[t, r] = act(w_gate[r] . x[t], w_up[r] . x[t]); the + 0.0f is the absent bias of matvec_integer_kernel.
template <int T, int NT, int LPR>
__global__ void matvec_gated_integer_kernel(Gated act, const uint8_t* wg, const uint8_t* wu, size_t row_stride,
                                            int64_t rows, int nb, const ActBlock* x, float* out, int64_t out_stride) {
    prefetch_block_rows<LPR>(wg, row_stride, rows);
    prefetch_block_rows<LPR>(wu, row_stride, rows);
    gpu::join_prior_grid();
    const int lane = row_lane<LPR>();
    const int64_t row = lane_group_row<LPR>();
    float g[NT] = {}, u[NT] = {};
    if (row < rows) integer_row_pair<T, NT, LPR>(wg + row * row_stride, wu + row * row_stride, nb, x, nb, lane, g, u);
#pragma unroll
    for (int t = 0; t < NT; ++t) {
        const float gs = group_sum<LPR>(g[t]) + 0.0f, us = group_sum<LPR>(u[t]) + 0.0f;
        if (lane == 0 && row < rows) out[t * out_stride + row] = gated(act, gs, us);
    }
}

// The gated expert form of matvec_experts_integer_kernel: grid.y is the slot. Past the routed slots, grid.y - slots
// more are a shared expert's rows of token grid.y - slots (sh.gate non-null), as matvec_gated_integer_kernel makes
// them.
template <int T, int LPR>
__global__ void matvec_experts_gated_integer_kernel(Gated act, const uint8_t* wg, const uint8_t* wu, size_t row_stride,
                                                    int64_t rows, int64_t n_experts, int nb, const ActBlock* x,
                                                    bool x_per_slot, const int32_t* ids, int k, float* out,
                                                    int64_t out_stride, int64_t slots, SharedGated sh) {
    const int64_t slot = blockIdx.y;
    if (slot >= slots) {
        const uint8_t* sg = sh.gate.data;
        const uint8_t* su = sh.up.data;
        prefetch_block_rows<LPR>(sg, row_stride, sh.gate.rows);
        prefetch_block_rows<LPR>(su, row_stride, sh.gate.rows);
        gpu::join_prior_grid();
        const int lane = row_lane<LPR>();
        const int64_t row = lane_group_row<LPR>(), t = slot - slots;
        float g[1] = {0.0f}, u[1] = {0.0f};
        if (row < sh.gate.rows)
            integer_row_pair<T, 1, LPR>(sg + row * row_stride, su + row * row_stride, nb, x + t * nb, nb, lane, g, u);
        const float gs = group_sum<LPR>(g[0]) + 0.0f, us = group_sum<LPR>(u[0]) + 0.0f;
        if (lane == 0 && row < sh.gate.rows) sh.out.data[t * sh.out.stride + row] = gated(act, gs, us);
        return;
    }
    gpu::join_prior_grid();
    const int lane = row_lane<LPR>();
    const int64_t row = lane_group_row<LPR>();
    const int32_t e = ids[slot];
    float g[1] = {0.0f}, u[1] = {0.0f};
    if (row < rows && e >= 0 && e < n_experts) {
        const ActBlock* xs = x + (x_per_slot ? slot : slot / k) * nb;
        const int64_t r = (static_cast<int64_t>(e) * rows + row) * static_cast<int64_t>(row_stride);
        integer_row_pair<T, 1, LPR>(wg + r, wu + r, nb, xs, nb, lane, g, u);
    }
    const float gs = group_sum<LPR>(g[0]), us = group_sum<LPR>(u[0]);
    if (lane == 0 && row < rows) out[slot * out_stride + row] = gated(act, gs, us);
}

// grid.y: slot s = t * k + j of the expert form.
template <int T, int LPR>
__global__ void matvec_experts_integer_kernel(const uint8_t* w, size_t row_stride, int64_t rows, int64_t n_experts,
                                              int nb, const ActBlock* x, bool x_per_slot, const int32_t* ids, int k,
                                              float* out, int64_t out_stride) {
    gpu::join_prior_grid();
    const int lane = row_lane<LPR>();
    const int64_t row = lane_group_row<LPR>();
    const int64_t slot = blockIdx.y;
    const int32_t e = ids[slot];
    const bool valid = e >= 0 && e < n_experts;
    float acc[1] = {0.0f};
    if (row < rows && valid) {
        const ActBlock* xs = x + (x_per_slot ? slot : slot / k) * nb;
        integer_row<T, 1, LPR>(w + (static_cast<int64_t>(e) * rows + row) * row_stride, nb, xs, nb, lane, acc);
    }
    const float sum = group_sum<LPR>(acc[0]);
    if (lane == 0 && row < rows) out[slot * out_stride + row] = sum;
}

// --- float path --------------------------------------------------------------------------------------------------

template <int T, int NT, int LPR>
__global__ void matvec_float_kernel(const uint8_t* w, size_t row_stride, int64_t rows, int64_t cols, const float* x,
                                    int64_t x_stride, float* out, int64_t out_stride, const float* bias) {
    prefetch_block_rows<LPR>(w, row_stride, rows);
    gpu::join_prior_grid();
    const int lane = row_lane<LPR>();
    const int64_t row = lane_group_row<LPR>();
    float acc[NT] = {};
    if (row < rows) float_row<T, NT, LPR>(w + row * row_stride, cols, x, x_stride, lane, acc);
    store_row_sums<NT, LPR>(acc, lane, row, rows, out, out_stride, bias);
}

template <int T, int LPR>
__global__ void matvec_experts_float_kernel(const uint8_t* w, size_t row_stride, int64_t rows, int64_t n_experts,
                                            int64_t cols, const float* x, int64_t x_stride, bool x_per_slot,
                                            const int32_t* ids, int k, float* out, int64_t out_stride) {
    gpu::join_prior_grid();
    const int lane = row_lane<LPR>();
    const int64_t row = lane_group_row<LPR>();
    const int64_t slot = blockIdx.y;
    const int32_t e = ids[slot];
    float acc[1] = {0.0f};
    if (row < rows && e >= 0 && e < n_experts) {
        const float* xs = x + (x_per_slot ? slot : slot / k) * x_stride;
        float_row<T, 1, LPR>(w + (static_cast<int64_t>(e) * rows + row) * row_stride, cols, xs, x_stride, lane, acc);
    }
    const float sum = group_sum<LPR>(acc[0]);
    if (lane == 0 && row < rows) out[slot * out_stride + row] = sum;
}

// grid.y: a tile of at most kMatvecExpertTileSlots slots of one expert (group_expert_slots); blocks past the tile
// count return at once. Each slot's sum is the per-slot kernel's, bit for bit: with GATED, gate (wg) and up (wu) rows
// walked together as integer_row_pair walks them and each pair made into act(gate, up) as
// matvec_experts_gated_integer_kernel makes it; else the rows of wg alone, as matvec_experts_integer_kernel sums them.
template <int T, int LPR, bool GATED>
__global__ void matvec_experts_grouped_kernel(Gated act, const uint8_t* wg, const uint8_t* wu, size_t row_stride,
                                              int64_t rows, int nb, const ActBlock* x, bool x_per_slot, int k,
                                              ExpertGroups groups, float* out, int64_t out_stride) {
    gpu::join_prior_grid();
    constexpr int BN = kMatvecExpertTileSlots;
    __shared__ int64_t x_row[BN], out_row[BN];
    int expert = 0;
    const int n = load_token_tile<BN>(groups, 0, x_per_slot, k, x_row, out_row, expert);
    if (n == 0) return;
    __syncthreads();
    const int lane = row_lane<LPR>();
    const int64_t row = lane_group_row<LPR>();
    float g[BN] = {}, u[BN] = {};
    if (row < rows) {
        const int64_t r = (static_cast<int64_t>(expert) * rows + row) * static_cast<int64_t>(row_stride);
        for (int b = lane; b < nb; b += LPR) {
            const IntegerBlock gb = load_integer_block<T>(wg + r + static_cast<size_t>(b) * kIntegerBlockBytes<T>);
            IntegerBlock ub;
            if constexpr (GATED) ub = load_integer_block<T>(wu + r + static_cast<size_t>(b) * kIntegerBlockBytes<T>);
#pragma unroll
            for (int t = 0; t < BN; ++t)
                if (t < n) {
                    const ActBlock& xa = x[x_row[t] * nb + b];
                    g[t] += integer_dot<T>(gb, xa);
                    if constexpr (GATED) u[t] += integer_dot<T>(ub, xa);
                }
        }
    }
#pragma unroll
    for (int t = 0; t < BN; ++t) {
        if (t < n) {  // n is the same for the whole block: every lane takes part in the shuffles
            const float gs = group_sum<LPR>(g[t]);
            if constexpr (GATED) {
                const float us = group_sum<LPR>(u[t]);
                if (lane == 0 && row < rows) out[out_row[t] * out_stride + row] = gated(act, gs, us);
            } else {
                if (lane == 0 && row < rows) out[out_row[t] * out_stride + row] = gs;
            }
        }
    }
}

}  // namespace

bool has_integer_matvec(uint32_t type) { return integer_path(type); }

size_t q8_1_bytes(int64_t rows, int64_t cols) { return static_cast<size_t>(rows * (cols / 32)) * sizeof(ActBlock); }

void quantize_q8_1(const Launch& l, const Rows& x, void* out) {
    const int64_t n = x.rows * x.cols;  // a thread per value (cols a multiple of 32)
    if (n == 0) return;
    launch_kernel(l, quantize_q8_1_kernel, static_cast<unsigned>((n + 127) / 128), 128, 0, x.data, x.rows, x.cols,
                  x.stride, static_cast<ActBlock*>(out));
}

void matvec_integer(const Launch& l, const Weights& w, const void* xq, int64_t tokens, const Rows& out,
                    const float* bias, const NormTail* norm) {
    const int nb = static_cast<int>(w.cols / 32);
    const auto* x = static_cast<const ActBlock*>(xq);
    for (int64_t t0 = 0; t0 < tokens;) {
        const int64_t run = token_run<kIntegerRunTokens>(tokens - t0);
        // Only the last launch ends with the norm: the runs before it have written their rows by then.
        const NormTail tail = norm && t0 + run == tokens ? *norm : NormTail{};
        dispatch_integer_type(w.type, [&]<int T>() {
            with_lanes(nb, [&]<int LPR>() {
                with_tokens<kIntegerRunTokens>(run, [&]<int NT>() {
                    const unsigned grid = static_cast<unsigned>((w.rows + kMatvecThreads / LPR - 1) / (kMatvecThreads / LPR));
                    launch_kernel(l, matvec_integer_kernel<T, NT, LPR>, grid, kMatvecThreads, 0, w.data, w.row_stride,
                                  w.rows, nb, x + t0 * nb, out.data + t0 * out.stride, out.stride, bias, tail);
                });
            });
        });
        t0 += run;
    }
}

void matvec_gated_integer(const Launch& l, Gated act, const Weights& w_gate, const Weights& w_up, const void* xq,
                          int64_t tokens, const Rows& out) {
    const int nb = static_cast<int>(w_gate.cols / 32);
    const auto* x = static_cast<const ActBlock*>(xq);
    for (int64_t t0 = 0; t0 < tokens;) {
        const int64_t run = token_run<kGatedRunTokens>(tokens - t0);
        dispatch_integer_type(w_gate.type, [&]<int T>() {
            with_lanes(nb, [&]<int LPR>() {
                with_tokens<kGatedRunTokens>(run, [&]<int NT>() {
                    const unsigned grid = static_cast<unsigned>((w_gate.rows + kMatvecThreads / LPR - 1) / (kMatvecThreads / LPR));
                    launch_kernel(l, matvec_gated_integer_kernel<T, NT, LPR>, grid, kMatvecThreads, 0, act, w_gate.data,
                                  w_up.data, w_gate.row_stride, w_gate.rows, nb, x + t0 * nb,
                                  out.data + t0 * out.stride, out.stride);
                });
            });
        });
        t0 += run;
    }
}

void matvec_experts_gated_integer(const Launch& l, Gated act, const Weights& w_gate, const Weights& w_up,
                                  int64_t n_experts, const void* xq, bool x_per_slot, const int32_t* ids,
                                  int64_t tokens, int k, const Rows& out, const SharedGated* shared) {
    const int nb = static_cast<int>(w_gate.cols / 32);
    const int64_t rows = w_gate.rows / n_experts, slots = tokens * k;
    const int64_t grid_rows = shared && shared->gate.rows > rows ? shared->gate.rows : rows;
    dispatch_integer_type(w_gate.type, [&]<int T>() {
        with_lanes(nb, [&]<int LPR>() {
            const dim3 grid(static_cast<unsigned>((grid_rows + kMatvecThreads / LPR - 1) / (kMatvecThreads / LPR)),
                            static_cast<unsigned>(slots + (shared ? tokens : 0)));
            launch_kernel(l, matvec_experts_gated_integer_kernel<T, LPR>, grid, kMatvecThreads, 0, act, w_gate.data,
                          w_up.data, w_gate.row_stride, rows, n_experts, nb, static_cast<const ActBlock*>(xq),
                          x_per_slot, ids, k, out.data, out.stride, slots, shared ? *shared : SharedGated{});
        });
    });
}

void matvec_float(const Launch& l, const Weights& w, const Rows& x, const Rows& out, const float* bias) {
    const int64_t chunks = (w.cols + 31) / 32;
    dispatch_weight_type(w.type, [&]<int T>() {
        constexpr int kRun = kFloatRunTokens<T>;
        for (int64_t t0 = 0; t0 < x.rows;) {
            const int64_t run = token_run<kRun>(x.rows - t0);
            with_lanes(chunks, [&]<int LPR>() {
                with_tokens<kRun>(run, [&]<int NT>() {
                    const unsigned grid = static_cast<unsigned>((w.rows + kMatvecThreads / LPR - 1) / (kMatvecThreads / LPR));
                    launch_kernel(l, matvec_float_kernel<T, NT, LPR>, grid, kMatvecThreads, 0, w.data, w.row_stride,
                                  w.rows, w.cols, x.data + t0 * x.stride, x.stride, out.data + t0 * out.stride,
                                  out.stride, bias);
                });
            });
            t0 += run;
        }
    });
}

void matvec_experts_integer(const Launch& l, const Weights& w, int64_t n_experts, const void* xq, bool x_per_slot,
                            const int32_t* ids, int64_t tokens, int k, const Rows& out) {
    const int nb = static_cast<int>(w.cols / 32);
    const int64_t rows = w.rows / n_experts;
    dispatch_integer_type(w.type, [&]<int T>() {
        with_lanes(nb, [&]<int LPR>() {
            const dim3 grid(static_cast<unsigned>((rows + kMatvecThreads / LPR - 1) / (kMatvecThreads / LPR)),
                            static_cast<unsigned>(tokens * k));
            launch_kernel(l, matvec_experts_integer_kernel<T, LPR>, grid, kMatvecThreads, 0, w.data, w.row_stride, rows,
                          n_experts, nb, static_cast<const ActBlock*>(xq), x_per_slot, ids, k, out.data, out.stride);
        });
    });
}

namespace {

// The grouped expert mat x vec's launch: the slots grouped by expert, then launch<T, LPR>(grid, nb, rows, groups) with
// a block per kMatvecThreads / LPR rows and per tile of kMatvecExpertTileSlots slots.
template <typename F>
void launch_grouped(const Launch& l, const Weights& w, int64_t n_experts, const int32_t* ids, int64_t tokens, int k,
                    const Rows& out, void* scratch, F&& launch) {
    const int nb = static_cast<int>(w.cols / 32);
    const int64_t rows = w.rows / n_experts;
    const int64_t slots = tokens * k;
    const ExpertGroups groups = group_expert_slots(l, ids, slots, n_experts, kMatvecExpertTileSlots, scratch, out);
    dispatch_integer_type(w.type, [&]<int T>() {
        with_lanes(nb, [&]<int LPR>() {
            const dim3 grid(static_cast<unsigned>((rows + kMatvecThreads / LPR - 1) / (kMatvecThreads / LPR)),
                            static_cast<unsigned>(max_expert_tiles(slots, n_experts, kMatvecExpertTileSlots)));
            launch.template operator()<T, LPR>(grid, nb, rows, groups);
        });
    });
}

}  // namespace

void matvec_experts_grouped(const Launch& l, const Weights& w, int64_t n_experts, const void* xq, bool x_per_slot,
                            const int32_t* ids, int64_t tokens, int k, const Rows& out, void* scratch) {
    launch_grouped(l, w, n_experts, ids, tokens, k, out, scratch,
                   [&]<int T, int LPR>(dim3 grid, int nb, int64_t rows, const ExpertGroups& groups) {
                       launch_kernel(l, matvec_experts_grouped_kernel<T, LPR, false>, grid, kMatvecThreads, 0,
                                     Gated::silu, w.data, nullptr, w.row_stride, rows, nb,
                                     static_cast<const ActBlock*>(xq), x_per_slot, k, groups, out.data, out.stride);
                   });
}

void matvec_experts_gated_grouped(const Launch& l, Gated act, const Weights& w_gate, const Weights& w_up,
                                  int64_t n_experts, const void* xq, bool x_per_slot, const int32_t* ids,
                                  int64_t tokens, int k, const Rows& out, void* scratch) {
    launch_grouped(l, w_gate, n_experts, ids, tokens, k, out, scratch,
                   [&]<int T, int LPR>(dim3 grid, int nb, int64_t rows, const ExpertGroups& groups) {
                       launch_kernel(l, matvec_experts_grouped_kernel<T, LPR, true>, grid, kMatvecThreads, 0, act,
                                     w_gate.data, w_up.data, w_gate.row_stride, rows, nb,
                                     static_cast<const ActBlock*>(xq), x_per_slot, k, groups, out.data, out.stride);
                   });
}

void matvec_experts_float(const Launch& l, const Weights& w, int64_t n_experts, const Rows& x, bool x_per_slot,
                          const int32_t* ids, int64_t tokens, int k, const Rows& out) {
    const int64_t rows = w.rows / n_experts;
    dispatch_weight_type(w.type, [&]<int T>() {
        with_lanes((w.cols + 31) / 32, [&]<int LPR>() {
            const dim3 grid(static_cast<unsigned>((rows + kMatvecThreads / LPR - 1) / (kMatvecThreads / LPR)),
                            static_cast<unsigned>(tokens * k));
            launch_kernel(l, matvec_experts_float_kernel<T, LPR>, grid, kMatvecThreads, 0, w.data, w.row_stride, rows,
                          n_experts, w.cols, x.data, x.stride, x_per_slot, ids, k, out.data, out.stride);
        });
    });
}

}  // namespace ember::gpu_kernels
