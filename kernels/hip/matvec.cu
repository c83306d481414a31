// SPDX-License-Identifier: MIT
// Mat x vec for decode and verify batches (up to 32 tokens), the memory-bound hot path. A group of LPR lanes owns one
// weight row; lane l walks blocks l, l + LPR, ... so that a group reads its row front to back. Each launch takes a run
// of at most 16 tokens (8 on the float path) and reads the weights once for all of them.
//   integer path (ROCmFP4 dual/FAST, Q4_0, Q8_0): activations quantized once to Q8_1-style blocks, weights
//     expanded to int8 (ROCmFP4 through byte-permute codebook lookups, rocmfp4.md §7.2), 4 x int8 dot products;
//   float path (every other type): decode32 to floats, fp32 dot products.
// The expert forms pick each slot's matrix from ids on the device: per slot for one token, and for a verify batch
// grouped by expert, so that an expert's rows are read once for every slot routed to it (the same sums as per slot).
#include "activation_blocks.cuh"
#include "activations.cuh"
#include "expert_tiles.cuh"
#include "matvec_common.cuh"

namespace ember::gpu_kernels {

namespace {

// One warp lane per activation: 32 lanes quantize a block together (rows of whole blocks).
__global__ void quantize_q8_1_kernel(const float* x, int64_t rows, int64_t cols, int64_t stride, ActBlock* out) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int64_t nb = cols / 32, block = i / 32;
    if (block >= rows * nb) return;  // whole groups of 32 lanes leave together
    const int64_t r = block / nb, c = (block % nb) * 32 + i % 32;
    quantize_activation_block(x[r * stride + c], static_cast<int>(i % 32), out + block);
}

// Four ROCmFP4 codes (one per byte, 0..15) to their int8 values: two 8-entry byte-permute lookups, one for the
// positive half of the codebook and one for the negative half, selected per byte by the code's sign bit.
__device__ __forceinline__ uint32_t rocmfp4_values(uint32_t codes) {
    const uint32_t idx = codes & 0x07070707u;
    const uint32_t positive = gpu::lookup8(0x03020100u, 0x0a080604u, idx);
    const uint32_t negative = gpu::lookup8(0xfdfeff00u, 0xf6f8fafcu, idx);
    const uint32_t mask = ((codes >> 3) & 0x01010101u) * 0xffu;
    return gpu::select_bytes(mask, negative, positive);
}

// One weight block expanded to int8 values with its scales (s1: the second half's scale, ROCmFP4 dual only).
struct IntegerBlock {
    int v[8];
    float s0 = 0.0f, s1 = 0.0f;
};

template <int T>
__device__ __forceinline__ IntegerBlock load_integer_block(const uint8_t* blk) {
    IntegerBlock b;
    if constexpr (T == kRocmfp4 || T == kRocmfp4Fast) {
        uint32_t w[5];
        gpu::load_unaligned<T == kRocmfp4 ? 18 : 17>(blk, w);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            b.v[i] = static_cast<int>(rocmfp4_values(w[i] & 0x0f0f0f0fu));
            b.v[4 + i] = static_cast<int>(rocmfp4_values((w[i] >> 4) & 0x0f0f0f0fu));
        }
        b.s0 = rocmfp_scale(static_cast<uint8_t>(w[4] & 0xff));
        b.s1 = T == kRocmfp4 ? rocmfp_scale(static_cast<uint8_t>((w[4] >> 8) & 0xff)) : b.s0;
    } else if constexpr (T == kQ4_0) {
        uint32_t w[4];
        gpu::load_unaligned<16>(blk + 2, w);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            b.v[i] = static_cast<int>(w[i] & 0x0f0f0f0fu);
            b.v[4 + i] = static_cast<int>((w[i] >> 4) & 0x0f0f0f0fu);
        }
        b.s0 = half_to_float(gpu::load_u16(blk));
    } else {  // Q8_0
        uint32_t w[8];
        gpu::load_unaligned<32>(blk + 2, w);
#pragma unroll
        for (int i = 0; i < 8; ++i) b.v[i] = static_cast<int>(w[i]);
        b.s0 = half_to_float(gpu::load_u16(blk));
    }
    return b;
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

template <int T>
inline constexpr int kIntegerBlockBytes = T == kRocmfp4 ? 18 : T == kRocmfp4Fast ? 17 : T == kQ4_0 ? 18 : 34;

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

template <int T, int NT, int LPR>
__global__ void matvec_integer_kernel(const uint8_t* w, size_t row_stride, int64_t rows, int nb, const ActBlock* x,
                                      float* out, int64_t out_stride, const float* bias) {
    const int lane = row_lane<LPR>();
    const int64_t row = lane_group_row<LPR>();
    float acc[NT] = {};
    if (row < rows) integer_row<T, NT, LPR>(w + row * row_stride, nb, x, nb, lane, acc);
    store_row_sums<NT, LPR>(acc, lane, row, rows, out, out_stride, bias);
}

// The matrices of matvec_integer_many: block ranges [first_block[m], first_block[m + 1]) make matrix m's rows.
struct ManyProducts {
    const uint8_t* w[kMaxManyProducts];
    size_t row_stride[kMaxManyProducts];
    int64_t rows[kMaxManyProducts];
    uint32_t type[kMaxManyProducts];
    float* out[kMaxManyProducts];
    int64_t out_stride[kMaxManyProducts];
    const float* bias[kMaxManyProducts];
    unsigned first_block[kMaxManyProducts + 1];
    int count;
};

template <int NT, int LPR>
__global__ void matvec_integer_many_kernel(ManyProducts a, int nb, const ActBlock* x) {
    int m = 0;
    while (m + 1 < a.count && blockIdx.x >= a.first_block[m + 1]) ++m;
    const int lane = row_lane<LPR>();
    const int64_t row = static_cast<int64_t>(blockIdx.x - a.first_block[m]) * (blockDim.x / LPR) + threadIdx.x / LPR;
    float acc[NT] = {};
    if (row < a.rows[m]) {
        const uint8_t* wr = a.w[m] + row * a.row_stride[m];
        switch (a.type[m]) {  // the same for the whole block
            case kRocmfp4: integer_row<kRocmfp4, NT, LPR>(wr, nb, x, nb, lane, acc); break;
            case kRocmfp4Fast: integer_row<kRocmfp4Fast, NT, LPR>(wr, nb, x, nb, lane, acc); break;
            case kQ4_0: integer_row<kQ4_0, NT, LPR>(wr, nb, x, nb, lane, acc); break;
            default: integer_row<kQ8_0, NT, LPR>(wr, nb, x, nb, lane, acc); break;
        }
    }
    store_row_sums<NT, LPR>(acc, lane, row, a.rows[m], a.out[m], a.out_stride[m], a.bias[m]);
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

// The gated expert form of matvec_experts_integer_kernel: grid.y is the slot.
template <int T, int LPR>
__global__ void matvec_experts_gated_integer_kernel(Gated act, const uint8_t* wg, const uint8_t* wu,
                                                    size_t row_stride, int64_t rows, int64_t n_experts, int nb,
                                                    const ActBlock* x, bool x_per_slot, const int32_t* ids, int k,
                                                    float* out, int64_t out_stride) {
    const int lane = row_lane<LPR>();
    const int64_t row = lane_group_row<LPR>();
    const int64_t slot = blockIdx.y;
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

// grid.y: a tile of at most kMatvecExpertTileSlots slots of one expert (group_expert_slots); blocks past the tile
// count return at once. Each slot's sum is the per-slot kernel's, bit for bit.
template <int T, int LPR>
__global__ void matvec_experts_grouped_kernel(const uint8_t* w, size_t row_stride, int64_t rows, int nb,
                                              const ActBlock* x, bool x_per_slot, int k, ExpertGroups groups,
                                              float* out, int64_t out_stride) {
    constexpr int BN = kMatvecExpertTileSlots;
    __shared__ int64_t x_row[BN], out_row[BN];
    int expert = 0;
    const int n = load_token_tile<BN>(groups, 0, x_per_slot, k, x_row, out_row, expert);
    if (n == 0) return;
    __syncthreads();
    const int lane = row_lane<LPR>();
    const int64_t row = lane_group_row<LPR>();
    float acc[BN] = {};
    if (row < rows) {
        const uint8_t* wr = w + (static_cast<int64_t>(expert) * rows + row) * row_stride;
        for (int b = lane; b < nb; b += LPR) {
            const IntegerBlock wb = load_integer_block<T>(wr + static_cast<size_t>(b) * kIntegerBlockBytes<T>);
#pragma unroll
            for (int t = 0; t < BN; ++t)
                if (t < n) acc[t] += integer_dot<T>(wb, x[x_row[t] * nb + b]);
        }
    }
#pragma unroll
    for (int t = 0; t < BN; ++t) {
        if (t < n) {  // n is the same for the whole block: every lane takes part in the shuffles
            const float sum = group_sum<LPR>(acc[t]);
            if (lane == 0 && row < rows) out[out_row[t] * out_stride + row] = sum;
        }
    }
}

// --- the end of a mixture-of-experts block -------------------------------------------------------------------------

constexpr int kMoeDownThreads = 256;

// grid (row tiles, tokens). The block stages its token's k slot rows and the shared expert's row, quantizes them in
// shared memory into the blocks quantize_q8_1 writes, then each group of LPR lanes makes one output row: the k routed
// down products and the shared one, each summed as matvec_experts_integer_kernel and matvec_integer_kernel sum (the
// + 0.0f is the latter's absent bias), combined in moe_combine_kernel's order and rounding.
template <int T, int LPR>
__global__ void moe_down_combine_kernel(const uint8_t* w, size_t row_stride, int64_t rows, int64_t n_experts, int nb,
                                        const float* act, int64_t act_stride, bool act_per_slot, const int32_t* ids,
                                        int k, const float* weights, int64_t weights_stride, const uint8_t* shared_w,
                                        const float* shared_act, int64_t shared_stride, const float* gate,
                                        int64_t gate_stride, float* out, int64_t out_stride) {
    extern __shared__ float staged[];  // inputs * cols floats, then inputs * nb activation blocks
    const int64_t t = blockIdx.y;
    const int cols = nb * 32, inputs = k + (shared_w ? 1 : 0);
#pragma unroll 8
    for (int i = threadIdx.x; i < inputs * cols; i += blockDim.x) {
        const int j = i / cols, c = i % cols;
        staged[i] = j < k ? act[(act_per_slot ? t * k + j : t) * act_stride + c] : shared_act[t * shared_stride + c];
    }
    __syncthreads();
    ActBlock* xq = reinterpret_cast<ActBlock*>(staged + inputs * cols);
    for (int i = threadIdx.x; i < inputs * cols; i += blockDim.x)  // whole warps: inputs * cols is a multiple of 32
        quantize_activation_block(staged[i], i % 32, xq + i / 32);
    __syncthreads();
    const int lane = row_lane<LPR>();
    const int64_t row = lane_group_row<LPR>();
    // Every input's weight row (nullptr: an id out of range, a zero row), then each lane's blocks of all of them
    // loaded before any is used: the inputs' memory latencies overlap instead of adding up.
    const uint8_t* wrow[kMaxMoeDownInputs];
#pragma unroll
    for (int j = 0; j < kMaxMoeDownInputs; ++j) {
        wrow[j] = nullptr;
        if (j < k && row < rows) {
            const int32_t e = ids[t * k + j];
            if (e >= 0 && e < n_experts) wrow[j] = w + (static_cast<int64_t>(e) * rows + row) * row_stride;
        } else if (j == k && shared_w && row < rows) {
            wrow[j] = shared_w + row * row_stride;
        }
    }
    float acc[kMaxMoeDownInputs] = {};
    for (int b = lane; b < nb; b += LPR) {
        IntegerBlock wb[kMaxMoeDownInputs];
#pragma unroll
        for (int j = 0; j < kMaxMoeDownInputs; ++j)
            if (wrow[j]) wb[j] = load_integer_block<T>(wrow[j] + static_cast<size_t>(b) * kIntegerBlockBytes<T>);
#pragma unroll
        for (int j = 0; j < kMaxMoeDownInputs; ++j)
            if (wrow[j]) acc[j] += integer_dot<T>(wb[j], xq[j * nb + b]);
    }
    float sum = 0.0f, shared_sum = 0.0f;
#pragma unroll
    for (int j = 0; j < kMaxMoeDownInputs; ++j) {
        const float product = group_sum<LPR>(acc[j]);  // every lane takes part for every j
        if (j < k)
            sum = combine_term(weights[t * weights_stride + j], product, sum);
        else if (j == k)
            shared_sum = product;
    }
    if (shared_w) sum = combine_shared(sum, shared_sum + 0.0f, gate[t * gate_stride]);
    if (lane == 0 && row < rows) out[t * out_stride + row] = sum;
}

// --- float path --------------------------------------------------------------------------------------------------

template <int T, int NT, int LPR>
__device__ __forceinline__ void float_row(const uint8_t* row, int64_t cols, const float* x, int64_t x_stride, int lane,
                                          float (&acc)[NT]) {
    const int64_t chunks = (cols + 31) / 32;
    for (int64_t c = lane; c < chunks; c += LPR) {
        float wv[32];
        decode32<T>(row, c, wv);
        const int n = cols - 32 * c < 32 ? static_cast<int>(cols - 32 * c) : 32;  // float types may end mid-chunk
#pragma unroll
        for (int t = 0; t < NT; ++t) {
            const float* xt = x + t * x_stride + 32 * c;
            float s = 0.0f;
            if (n == 32) {
#pragma unroll
                for (int i = 0; i < 32; ++i) s += wv[i] * xt[i];
            } else {
                for (int i = 0; i < n; ++i) s += wv[i] * xt[i];
            }
            acc[t] += s;
        }
    }
}

template <int T, int NT, int LPR>
__global__ void matvec_float_kernel(const uint8_t* w, size_t row_stride, int64_t rows, int64_t cols, const float* x,
                                    int64_t x_stride, float* out, int64_t out_stride, const float* bias) {
    const int lane = row_lane<LPR>();
    const int64_t row = lane_group_row<LPR>();
    float acc[NT] = {};
    if (row < rows) float_row<T, NT, LPR>(w + row * row_stride, cols, x, x_stride, lane, acc);
    store_row_sums<NT, LPR>(acc, lane, row, rows, out, out_stride, bias);
}

// matvec_float_many's kernel: F32 matrices (ManyProducts' block ranges), each row summed as matvec_float_kernel sums.
template <int NT, int LPR>
__global__ void matvec_float_many_kernel(ManyProducts a, int64_t cols, const float* x, int64_t x_stride) {
    int m = 0;
    while (m + 1 < a.count && blockIdx.x >= a.first_block[m + 1]) ++m;
    const int lane = row_lane<LPR>();
    const int64_t row = static_cast<int64_t>(blockIdx.x - a.first_block[m]) * (blockDim.x / LPR) + threadIdx.x / LPR;
    float acc[NT] = {};
    if (row < a.rows[m]) float_row<kF32, NT, LPR>(a.w[m] + row * a.row_stride[m], cols, x, x_stride, lane, acc);
    store_row_sums<NT, LPR>(acc, lane, row, a.rows[m], a.out[m], a.out_stride[m], a.bias[m]);
}

template <int T, int LPR>
__global__ void matvec_experts_float_kernel(const uint8_t* w, size_t row_stride, int64_t rows, int64_t n_experts,
                                            int64_t cols, const float* x, int64_t x_stride, bool x_per_slot,
                                            const int32_t* ids, int k, float* out, int64_t out_stride) {
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

constexpr int kThreads = 128;
// The most tokens one launch takes: 16 on the integer path, 8 on the float path (its 32 decoded weights per lane
// leave room for fewer accumulators).
constexpr int kIntegerRunTokens = 16, kFloatRunTokens = 8;
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
    return type == kRocmfp4 || type == kRocmfp4Fast || type == kQ4_0 || type == kQ8_0;
}

template <typename F>
bool dispatch_integer_type(uint32_t type, F&& f) {
    return integer_path(type) && dispatch_weight_type(type, [&]<int T>() {
        if constexpr (integer_path(T)) f.template operator()<T>();
    });
}

}  // namespace

bool has_integer_matvec(uint32_t type) { return integer_path(type); }

size_t q8_1_bytes(int64_t rows, int64_t cols) { return static_cast<size_t>(rows * (cols / 32)) * sizeof(ActBlock); }

void quantize_q8_1(const Launch& l, const Rows& x, void* out) {
    const int64_t n = x.rows * x.cols;  // a thread per value (cols a multiple of 32)
    if (n == 0) return;
    quantize_q8_1_kernel<<<static_cast<unsigned>((n + 127) / 128), 128, 0, l.stream>>>(
        x.data, x.rows, x.cols, x.stride, static_cast<ActBlock*>(out));
}

void matvec_integer(const Launch& l, const Weights& w, const void* xq, int64_t tokens, const Rows& out,
                    const float* bias) {
    const int nb = static_cast<int>(w.cols / 32);
    const auto* x = static_cast<const ActBlock*>(xq);
    for (int64_t t0 = 0; t0 < tokens;) {
        const int64_t run = token_run<kIntegerRunTokens>(tokens - t0);
        dispatch_integer_type(w.type, [&]<int T>() {
            with_lanes(nb, [&]<int LPR>() {
                with_tokens<kIntegerRunTokens>(run, [&]<int NT>() {
                    const unsigned grid = static_cast<unsigned>((w.rows + kThreads / LPR - 1) / (kThreads / LPR));
                    matvec_integer_kernel<T, NT, LPR><<<grid, kThreads, 0, l.stream>>>(
                        w.data, w.row_stride, w.rows, nb, x + t0 * nb, out.data + t0 * out.stride, out.stride, bias);
                });
            });
        });
        t0 += run;
    }
}

namespace {

// The kernels' view of `count` products, with each matrix's block range for blocks of kThreads / LPR rows.
template <int LPR>
ManyProducts many_products(const ProductRows* products, int count) {
    constexpr int per_block = kThreads / LPR;
    ManyProducts a{};
    a.count = count;
    for (int m = 0; m < count; ++m) {
        const ProductRows& p = products[m];
        a.w[m] = p.w.data;
        a.row_stride[m] = p.w.row_stride;
        a.rows[m] = p.w.rows;
        a.type[m] = p.w.type;
        a.out[m] = p.out.data;
        a.out_stride[m] = p.out.stride;
        a.bias[m] = p.bias;
        a.first_block[m + 1] = a.first_block[m] + static_cast<unsigned>((p.w.rows + per_block - 1) / per_block);
    }
    return a;
}

// The outputs of tokens t0, ... of a run.
void advance_outputs(ManyProducts& a, const ProductRows* products, int64_t t0) {
    for (int m = 0; m < a.count; ++m) a.out[m] = products[m].out.data + t0 * products[m].out.stride;
}

}  // namespace

void matvec_integer_many(const Launch& l, const ProductRows* products, int count, const void* xq, int64_t tokens) {
    const int nb = static_cast<int>(products[0].w.cols / 32);
    const auto* x = static_cast<const ActBlock*>(xq);
    with_lanes(nb, [&]<int LPR>() {
        ManyProducts a = many_products<LPR>(products, count);
        for (int64_t t0 = 0; t0 < tokens;) {
            const int64_t run = token_run<kIntegerRunTokens>(tokens - t0);
            advance_outputs(a, products, t0);
            with_tokens<kIntegerRunTokens>(run, [&]<int NT>() {
                matvec_integer_many_kernel<NT, LPR><<<a.first_block[count], kThreads, 0, l.stream>>>(a, nb, x + t0 * nb);
            });
            t0 += run;
        }
    });
}

void matvec_float_many(const Launch& l, const ProductRows* products, int count, const Rows& x) {
    const int64_t chunks = (x.cols + 31) / 32;
    with_lanes(chunks, [&]<int LPR>() {
        ManyProducts a = many_products<LPR>(products, count);
        for (int64_t t0 = 0; t0 < x.rows;) {
            const int64_t run = token_run<kFloatRunTokens>(x.rows - t0);
            advance_outputs(a, products, t0);
            with_tokens<kFloatRunTokens>(run, [&]<int NT>() {
                matvec_float_many_kernel<NT, LPR><<<a.first_block[count], kThreads, 0, l.stream>>>(
                    a, x.cols, x.data + t0 * x.stride, x.stride);
            });
            t0 += run;
        }
    });
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
                    const unsigned grid = static_cast<unsigned>((w_gate.rows + kThreads / LPR - 1) / (kThreads / LPR));
                    matvec_gated_integer_kernel<T, NT, LPR><<<grid, kThreads, 0, l.stream>>>(
                        act, w_gate.data, w_up.data, w_gate.row_stride, w_gate.rows, nb, x + t0 * nb,
                        out.data + t0 * out.stride, out.stride);
                });
            });
        });
        t0 += run;
    }
}

void matvec_experts_gated_integer(const Launch& l, Gated act, const Weights& w_gate, const Weights& w_up,
                                  int64_t n_experts, const void* xq, bool x_per_slot, const int32_t* ids,
                                  int64_t tokens, int k, const Rows& out) {
    const int nb = static_cast<int>(w_gate.cols / 32);
    const int64_t rows = w_gate.rows / n_experts;
    dispatch_integer_type(w_gate.type, [&]<int T>() {
        with_lanes(nb, [&]<int LPR>() {
            const dim3 grid(static_cast<unsigned>((rows + kThreads / LPR - 1) / (kThreads / LPR)),
                            static_cast<unsigned>(tokens * k));
            matvec_experts_gated_integer_kernel<T, LPR><<<grid, kThreads, 0, l.stream>>>(
                act, w_gate.data, w_up.data, w_gate.row_stride, rows, n_experts, nb, static_cast<const ActBlock*>(xq),
                x_per_slot, ids, k, out.data, out.stride);
        });
    });
}

void matvec_float(const Launch& l, const Weights& w, const Rows& x, const Rows& out, const float* bias) {
    const int64_t chunks = (w.cols + 31) / 32;
    for (int64_t t0 = 0; t0 < x.rows;) {
        const int64_t run = token_run<kFloatRunTokens>(x.rows - t0);
        dispatch_weight_type(w.type, [&]<int T>() {
            with_lanes(chunks, [&]<int LPR>() {
                with_tokens<kFloatRunTokens>(run, [&]<int NT>() {
                    const unsigned grid = static_cast<unsigned>((w.rows + kThreads / LPR - 1) / (kThreads / LPR));
                    matvec_float_kernel<T, NT, LPR><<<grid, kThreads, 0, l.stream>>>(
                        w.data, w.row_stride, w.rows, w.cols, x.data + t0 * x.stride, x.stride,
                        out.data + t0 * out.stride, out.stride, bias);
                });
            });
        });
        t0 += run;
    }
}

void matvec_experts_integer(const Launch& l, const Weights& w, int64_t n_experts, const void* xq, bool x_per_slot,
                            const int32_t* ids, int64_t tokens, int k, const Rows& out) {
    const int nb = static_cast<int>(w.cols / 32);
    const int64_t rows = w.rows / n_experts;
    dispatch_integer_type(w.type, [&]<int T>() {
        with_lanes(nb, [&]<int LPR>() {
            const dim3 grid(static_cast<unsigned>((rows + kThreads / LPR - 1) / (kThreads / LPR)),
                            static_cast<unsigned>(tokens * k));
            matvec_experts_integer_kernel<T, LPR><<<grid, kThreads, 0, l.stream>>>(
                w.data, w.row_stride, rows, n_experts, nb, static_cast<const ActBlock*>(xq), x_per_slot, ids, k,
                out.data, out.stride);
        });
    });
}

size_t moe_down_combine_shared_bytes(int k, int64_t cols, bool shared) {
    const int64_t inputs = k + (shared ? 1 : 0);
    return static_cast<size_t>(inputs * cols) * sizeof(float) + static_cast<size_t>(inputs * (cols / 32)) * sizeof(ActBlock);
}

void moe_down_combine(const Launch& l, const Weights& down, int64_t n_experts, const Rows& act, bool act_per_slot,
                      const int32_t* ids, int k, const Rows& weights, const Weights* shared_down,
                      const Rows& shared_act, const Rows& gate, const Rows& out) {
    const int nb = static_cast<int>(down.cols / 32);
    const int64_t rows = down.rows / n_experts;
    const size_t shared = moe_down_combine_shared_bytes(k, down.cols, shared_down != nullptr);
    dispatch_integer_type(down.type, [&]<int T>() {
        with_lanes(nb, [&]<int LPR>() {
            constexpr int per_block = kMoeDownThreads / LPR;
            const dim3 grid(static_cast<unsigned>((rows + per_block - 1) / per_block), static_cast<unsigned>(out.rows));
            moe_down_combine_kernel<T, LPR><<<grid, kMoeDownThreads, shared, l.stream>>>(
                down.data, down.row_stride, rows, n_experts, nb, act.data, act.stride, act_per_slot, ids, k,
                weights.data, weights.stride, shared_down ? shared_down->data : nullptr, shared_act.data,
                shared_act.stride, gate.data, gate.stride, out.data, out.stride);
        });
    });
}

void matvec_experts_grouped(const Launch& l, const Weights& w, int64_t n_experts, const void* xq, bool x_per_slot,
                            const int32_t* ids, int64_t tokens, int k, const Rows& out, void* scratch) {
    const int nb = static_cast<int>(w.cols / 32);
    const int64_t rows = w.rows / n_experts;
    const int64_t slots = tokens * k;
    const ExpertGroups groups = group_expert_slots(l, ids, slots, n_experts, kMatvecExpertTileSlots, scratch, out);
    dispatch_integer_type(w.type, [&]<int T>() {
        with_lanes(nb, [&]<int LPR>() {
            const dim3 grid(static_cast<unsigned>((rows + kThreads / LPR - 1) / (kThreads / LPR)),
                            static_cast<unsigned>(max_expert_tiles(slots, n_experts, kMatvecExpertTileSlots)));
            matvec_experts_grouped_kernel<T, LPR><<<grid, kThreads, 0, l.stream>>>(
                w.data, w.row_stride, rows, nb, static_cast<const ActBlock*>(xq), x_per_slot, k, groups, out.data,
                out.stride);
        });
    });
}

void matvec_experts_float(const Launch& l, const Weights& w, int64_t n_experts, const Rows& x, bool x_per_slot,
                          const int32_t* ids, int64_t tokens, int k, const Rows& out) {
    const int64_t rows = w.rows / n_experts;
    dispatch_weight_type(w.type, [&]<int T>() {
        with_lanes((w.cols + 31) / 32, [&]<int LPR>() {
            const dim3 grid(static_cast<unsigned>((rows + kThreads / LPR - 1) / (kThreads / LPR)),
                            static_cast<unsigned>(tokens * k));
            matvec_experts_float_kernel<T, LPR><<<grid, kThreads, 0, l.stream>>>(
                w.data, w.row_stride, rows, n_experts, w.cols, x.data, x.stride, x_per_slot, ids, k, out.data,
                out.stride);
        });
    });
}

}  // namespace ember::gpu_kernels
