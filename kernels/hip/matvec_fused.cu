// SPDX-License-Identifier: MIT
// The fused products of a decode step: several matrices of one input in one launch (matvec_integer_many,
// matvec_float_many) and the end of a mixture-of-experts block (moe_down_combine), each row summed as matvec.cu's
// kernels sum it, so that a fused launch rounds exactly as the separate ones.
#include "kernel_launch.cuh"
#include "launch_tail.cuh"
#include "matvec_common.cuh"
#include "norm_rows.cuh"
#include "route_rows.cuh"

namespace ember::gpu_kernels {

namespace {

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

// This thread group's matrix m (its block range holds blockIdx.x) and its row there; the block's rows of that matrix
// are asked into L2 (prefetch_block_rows), so call it before gpu::join_prior_grid().
template <int LPR>
__device__ __forceinline__ int64_t many_row(const ManyProducts& a, int& m) {
    m = 0;
    while (m + 1 < a.count && blockIdx.x >= a.first_block[m + 1]) ++m;
    const int64_t block = static_cast<int64_t>(blockIdx.x - a.first_block[m]);
    prefetch_block_rows<LPR>(a.w[m], a.row_stride[m], a.rows[m], block);
    return block * (blockDim.x / LPR) + threadIdx.x / LPR;
}

template <int NT, int LPR>
__global__ void matvec_integer_many_kernel(ManyProducts a, int nb, const ActBlock* x) {
    int m = 0;
    const int64_t row = many_row<LPR>(a, m);
    gpu::join_prior_grid();
    const int lane = row_lane<LPR>();
    float acc[NT] = {};
    if (row < a.rows[m]) {
        const uint8_t* wr = a.w[m] + row * a.row_stride[m];
        switch (a.type[m]) {  // the same for the whole block
            case kRocmfp4: integer_row<kRocmfp4, NT, LPR>(wr, nb, x, nb, lane, acc); break;
            case kRocmfp4Fast: integer_row<kRocmfp4Fast, NT, LPR>(wr, nb, x, nb, lane, acc); break;
            case kMXFP4: integer_row<kMXFP4, NT, LPR>(wr, nb, x, nb, lane, acc); break;
            case kQ4_0: integer_row<kQ4_0, NT, LPR>(wr, nb, x, nb, lane, acc); break;
            default: integer_row<kQ8_0, NT, LPR>(wr, nb, x, nb, lane, acc); break;
        }
    }
    store_row_sums<NT, LPR>(acc, lane, row, a.rows[m], a.out[m], a.out_stride[m], a.bias[m]);
}

// matvec_float_many's kernel: F32 matrices (ManyProducts' block ranges), each row summed as matvec_float_kernel sums.
// The launch's last block routes every token's logits as moe_route_kernel does.
__device__ void route_in_last_block(const RouteTail& r) {
    if (!last_block_of_launch(r.counter)) return;
    extern __shared__ float probabilities[];  // [warps][n_experts]
    constexpr int W = gpu::kWarpSize;
    const int warp = static_cast<int>(threadIdx.x) / W, lane = static_cast<int>(threadIdx.x) % W;
    const int warps = static_cast<int>(blockDim.x) / W;
    const int64_t n = r.logits.cols;
    float* prob = probabilities + warp * n;
    for (int64_t t = warp; t < r.logits.rows; t += warps) {
        const volatile float* row = r.logits.data + t * r.logits.stride;
        for (int64_t e = lane; e < n; e += W) prob[e] = row[e];
        route_row(prob, n, r.k, prob, lane, r.ids + t * r.ids_stride, r.weights.data + t * r.weights.stride);
    }
    release_tail_counter(r.counter);
}

template <int NT, int LPR>
__global__ void matvec_float_many_kernel(ManyProducts a, int64_t cols, const float* x, int64_t x_stride,
                                         RouteTail route) {
    int m = 0;
    const int64_t row = many_row<LPR>(a, m);
    gpu::join_prior_grid();
    const int lane = row_lane<LPR>();
    float acc[NT] = {};
    if (row < a.rows[m]) float_row<kF32, NT, LPR>(a.w[m] + row * a.row_stride[m], cols, x, x_stride, lane, acc);
    store_row_sums<NT, LPR>(acc, lane, row, a.rows[m], a.out[m], a.out_stride[m], a.bias[m]);
    if (route.counter) route_in_last_block(route);
}

constexpr int kMoeDownThreads = 128;

// moe_down_combine's first launch: every input of every token (the k slot rows, then the shared expert's row) as the
// blocks quantize_q8_1 writes, in xq[(t * inputs + j) * nb + b], so that the products read them once each instead of
// every row block quantizing them again. A warp per block of 32 values.
__global__ void moe_down_quantize_kernel(const float* act, int64_t act_stride, bool act_per_slot, int k,
                                         const float* shared_act, int64_t shared_stride, int inputs, int nb,
                                         int64_t blocks, ActBlock* xq) {
    gpu::join_prior_grid();
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int64_t block = i / 32;
    if (block >= blocks) return;  // whole warps: blockDim.x is a multiple of 32
    const int64_t t = block / (static_cast<int64_t>(inputs) * nb);
    const int j = static_cast<int>(block / nb % inputs);
    const int64_t c = block % nb * 32 + i % 32;
    const float v = j < k ? act[(act_per_slot ? t * k + j : t) * act_stride + c] : shared_act[t * shared_stride + c];
    quantize_activation_block(v, static_cast<int>(i % 32), xq + block);
}

// grid (row tiles, tokens). Each group of LPR lanes makes one output row of its token: the k routed down products and
// the shared one on the token's quantized inputs (moe_down_quantize_kernel), each summed as
// matvec_experts_integer_kernel and matvec_integer_kernel sum (the + 0.0f is the latter's absent bias), combined in
// moe_combine_kernel's order and rounding.
template <int T, int LPR>
__global__ void moe_down_combine_kernel(const uint8_t* w, size_t row_stride, int64_t rows, int64_t n_experts, int nb,
                                        const ActBlock* xq, const int32_t* ids, int k, const float* weights,
                                        int64_t weights_stride, const uint8_t* shared_w, const float* gate,
                                        int64_t gate_stride, float* out, int64_t out_stride, NormTail norm) {
    if (shared_w && blockIdx.y == 0) prefetch_block_rows<LPR>(shared_w, row_stride, rows);
    gpu::join_prior_grid();
    const int64_t t = blockIdx.y;
    const int inputs = k + (shared_w ? 1 : 0);
    xq += t * inputs * nb;
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
    if (norm.counter) add_rms_norm_in_last_block(norm);
}

// The kernels' view of `count` products, with each matrix's block range for blocks of kMatvecThreads / LPR rows.
template <int LPR>
ManyProducts many_products(const ProductRows* products, int count) {
    constexpr int per_block = kMatvecThreads / LPR;
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
                launch_kernel(l, matvec_integer_many_kernel<NT, LPR>, a.first_block[count], kMatvecThreads, 0, a, nb,
                              x + t0 * nb);
            });
            t0 += run;
        }
    });
}

namespace {

// The route tail's probabilities: a warp's n_experts floats for each warp of a block.
size_t route_tail_bytes(int64_t n_experts) {
    return static_cast<size_t>(kMatvecThreads / gpu::kWarpSize * n_experts) * sizeof(float);
}

}  // namespace

bool route_tail_fits(int64_t n_experts) {
    return route_tail_bytes(n_experts) <= (48 << 10);
}

void matvec_float_many(const Launch& l, const ProductRows* products, int count, const Rows& x, const RouteTail* route) {
    const int64_t chunks = (x.cols + 31) / 32;
    with_lanes(chunks, [&]<int LPR>() {
        ManyProducts a = many_products<LPR>(products, count);
        for (int64_t t0 = 0; t0 < x.rows;) {
            const int64_t run = token_run<kFloatRunTokens<kF32>>(x.rows - t0);
            advance_outputs(a, products, t0);
            // Only the last launch routes: the runs before it have written their logits by then.
            const bool routes = route && t0 + run == x.rows;
            const RouteTail tail = routes ? *route : RouteTail{};
            const size_t shared = routes ? route_tail_bytes(route->logits.cols) : 0;
            with_tokens<kFloatRunTokens<kF32>>(run, [&]<int NT>() {
                launch_kernel(l, matvec_float_many_kernel<NT, LPR>, a.first_block[count], kMatvecThreads, shared, a,
                              x.cols, x.data + t0 * x.stride, x.stride, tail);
            });
            t0 += run;
        }
    });
}

size_t moe_down_blocks_bytes(int64_t tokens, int k, int64_t cols, bool shared) {
    return static_cast<size_t>(tokens * (k + (shared ? 1 : 0)) * (cols / 32)) * sizeof(ActBlock);
}

void moe_down_combine(const Launch& l, const Weights& down, int64_t n_experts, const Rows& act, bool act_per_slot,
                      const int32_t* ids, int k, const Rows& weights, const Weights* shared_down,
                      const Rows& shared_act, const Rows& gate, const Rows& out, void* blocks, const NormTail* norm) {
    const int nb = static_cast<int>(down.cols / 32);
    const int64_t rows = down.rows / n_experts;
    const int inputs = k + (shared_down ? 1 : 0);
    auto* xq = static_cast<ActBlock*>(blocks);
    const int64_t n_blocks = out.rows * inputs * nb;
    constexpr int kQuantizeThreads = 256;
    launch_kernel(l, moe_down_quantize_kernel,
                  static_cast<unsigned>((n_blocks * 32 + kQuantizeThreads - 1) / kQuantizeThreads), kQuantizeThreads, 0,
                  act.data, act.stride, act_per_slot, k, shared_act.data, shared_act.stride, inputs, nb, n_blocks, xq);
    dispatch_integer_type(down.type, [&]<int T>() {
        with_lanes(nb, [&]<int LPR>() {
            constexpr int per_block = kMoeDownThreads / LPR;
            const dim3 grid(static_cast<unsigned>((rows + per_block - 1) / per_block), static_cast<unsigned>(out.rows));
            launch_kernel(l, moe_down_combine_kernel<T, LPR>, grid, kMoeDownThreads, 0, down.data, down.row_stride,
                          rows, n_experts, nb, xq, ids, k, weights.data, weights.stride,
                          shared_down ? shared_down->data : nullptr, gate.data, gate.stride, out.data, out.stride,
                          norm ? *norm : NormTail{});
        });
    });
}

}  // namespace ember::gpu_kernels
