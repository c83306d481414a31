// SPDX-License-Identifier: MIT
// Elementwise and row-wise operations on F32 rows (strided views allowed): add, mul, scale, unary functions,
// gated activations, RMS / L2 / gated RMS / Layer norms, softmax, and the mixture-of-experts biases and combine.
#include "activation_blocks.cuh"
#include "activations.cuh"
#include "kernel_launch.cuh"
#include "norm_rows.cuh"

namespace ember::gpu_kernels {

namespace {

constexpr int kThreads = 256;

// Grid y is at most 65535: the elementwise kernels walk rows blockIdx.y, + gridDim.y, ... (a vision encoder
// sends tens of thousands of rows).
constexpr int64_t kMaxGridY = 65535;

dim3 elementwise_grid(const Rows& x) {
    const int64_t per_row = (x.cols + kThreads - 1) / kThreads;
    const int64_t rows = x.rows < kMaxGridY ? x.rows : kMaxGridY;
    return dim3(static_cast<unsigned>(per_row), static_cast<unsigned>(rows > 0 ? rows : 1));
}

__device__ __forceinline__ float apply(Unary op, float v) {
    switch (op) {
        case Unary::silu: return silu(v);
        case Unary::sigmoid: return sigmoid(v);
        case Unary::softplus: return softplus(v);
        case Unary::exp: return expf(v);
        case Unary::gelu_erf: return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
        default: return gelu_tanh(v);
    }
}

enum class Binary { add, mul };

// b_mode: 0 same shape, 1 one row, 2 one column.
__global__ void binary_kernel(Binary op, const float* a, int64_t as, const float* b, int64_t bs, int b_mode, float* out,
                              int64_t os, int64_t cols, int64_t rows) {
    gpu::join_prior_grid();
    const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
        const float va = a[r * as + c];
        const float vb = b_mode == 0 ? b[r * bs + c] : b_mode == 1 ? b[c] : b[r * bs];
        out[r * os + c] = op == Binary::add ? va + vb : va * vb;
    }
}

__global__ void unary_kernel(Unary op, float s, const float* x, int64_t xs, float* out, int64_t os, int64_t cols,
                             int64_t rows, bool scale_only) {
    gpu::join_prior_grid();
    const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
        const float v = x[r * xs + c];
        out[r * os + c] = scale_only ? v * s : apply(op, v);
    }
}

__global__ void gated_kernel(Gated act, const float* g, int64_t gs, const float* u, int64_t us, float* out, int64_t os,
                             int64_t cols, int64_t rows) {
    gpu::join_prior_grid();
    const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) out[r * os + c] = gated(act, g[r * gs + c], u[r * us + c]);
}

// Sum (kMax false) or maximum over the block (blockDim.x a multiple of the warp size, at most 1024 threads).
template <bool kMax>
__device__ float block_reduce(float v) {
    __shared__ float partial[32];
    v = kMax ? gpu::warp_max(v) : gpu::warp_sum(v);
    const int warp = threadIdx.x / gpu::kWarpSize, lane = threadIdx.x % gpu::kWarpSize;
    const int warps = blockDim.x / gpu::kWarpSize;
    __syncthreads();
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    float total = kMax ? -INFINITY : 0.0f;
    for (int i = 0; i < warps; ++i) total = kMax ? fmaxf(total, partial[i]) : total + partial[i];
    return total;
}

__device__ float block_sum(float v) { return block_reduce<false>(v); }

__device__ float block_max(float v) { return block_reduce<true>(v); }

// One block per row. z: gate rows for the gated form (nullptr otherwise). weight: n elements (n = cols).
__global__ void rms_norm_kernel(const float* x, int64_t xs, const float* w, const float* z, int64_t zs, float eps,
                                float* out, int64_t os, int64_t cols, ActBlock* q8_1) {
    gpu::join_prior_grid();
    const int64_t r = blockIdx.x;
    const float* in = x + r * xs;
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += in[c] * in[c];
    sum = block_sum(sum);
    const float inv = 1.0f / sqrtf(sum / static_cast<float>(cols) + eps);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = in[c] * inv * w[c];
        if (z) v *= silu(z[r * zs + c]);
        out[r * os + c] = v;
        if (q8_1) quantize_activation_block(v, static_cast<int>(c % 32), q8_1 + (r * cols + c) / 32);
    }
}

// One block per row: add_rms_norm_row (the same rounding as an add and an rms_norm launch).
__global__ void add_rms_norm_kernel(float* x, int64_t xs, const float* y, int64_t ys, const float* w, float eps,
                                    float* out, int64_t os, int64_t cols, ActBlock* q8_1) {
    gpu::join_prior_grid();
    const int64_t r = blockIdx.x;
    add_rms_norm_row(x + r * xs, y + r * ys, w, eps, out + r * os, cols, q8_1 ? q8_1 + r * cols / 32 : nullptr,
                     static_cast<int>(blockDim.x));
}

// One block per row; each run of head_dim elements normalized separately (one warp per head at a time).
__global__ void l2_norm_kernel(const float* x, int64_t xs, int head_dim, float eps, float* out, int64_t os,
                               int64_t cols) {
    gpu::join_prior_grid();
    const int64_t r = blockIdx.x;
    const int warp = threadIdx.x / gpu::kWarpSize, lane = threadIdx.x % gpu::kWarpSize;
    const int warps = blockDim.x / gpu::kWarpSize;
    for (int64_t h = warp; h < cols / head_dim; h += warps)
        l2_normalize_head(x + r * xs + h * head_dim, out + r * os + h * head_dim, head_dim, eps, lane);
}

__global__ void softmax_kernel(float* x, int64_t xs, int64_t cols) {
    gpu::join_prior_grid();
    float* p = x + static_cast<int64_t>(blockIdx.x) * xs;
    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, p[c]);
    m = block_max(m);
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        const float e = expf(p[c] - m);
        p[c] = e;
        sum += e;
    }
    sum = block_sum(sum);
    const float inv = 1.0f / sum;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) p[c] *= inv;
}

// out[t, c] = sum_j weights[t, j] * y[t * k + j, c], plus sigmoid(gate[t]) * shared[t, c] where shared is given
// (rounded as the separate sigmoid, mul and add launches).
__global__ void moe_combine_kernel(const float* y, int64_t ys, const float* wts, int64_t wss, int k,
                                   const float* shared, int64_t ss, const float* gate, int64_t gs, float* out,
                                   int64_t os, int64_t cols, int64_t rows) {
    gpu::join_prior_grid();
    const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    for (int64_t t = blockIdx.y; t < rows; t += gridDim.y) {
        float sum = 0.0f;
        for (int j = 0; j < k; ++j) sum = combine_term(wts[t * wss + j], y[(t * k + j) * ys + c], sum);
        out[t * os + c] = shared ? combine_shared(sum, shared[t * ss + c], gate[t * gs]) : sum;
    }
}

// beta = sigmoid(beta); alpha = softplus(alpha + dt_bias) * a, in place ([T, H] rows, dt_bias and a one row).
__global__ void deltanet_gates_kernel(float* beta, int64_t bs, float* alpha, int64_t as, const float* dt_bias,
                                      const float* a, int64_t cols, int64_t rows) {
    gpu::join_prior_grid();
    const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
        beta[r * bs + c] = sigmoid(beta[r * bs + c]);
        alpha[r * as + c] = deltanet_log_decay(alpha[r * as + c], dt_bias[c], a[c]);
    }
}

// out[s, c] += bias[ids[s / k, s % k], c]; ids outside [0, n_experts) add nothing.
__global__ void expert_bias_kernel(const float* bias, int64_t bs, int64_t n_experts, const int32_t* ids,
                                   int64_t ids_stride, int k, float* out, int64_t os, int64_t cols, int64_t slots) {
    gpu::join_prior_grid();
    const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    for (int64_t s = blockIdx.y; s < slots; s += gridDim.y) {
        const int32_t e = ids[(s / k) * ids_stride + s % k];
        if (e >= 0 && e < n_experts) out[s * os + c] += bias[e * bs + c];
    }
}

// One block per row: (x - mean) / sqrt(biased variance + eps) * weight + bias, two passes over the row.
__global__ void layer_norm_kernel(const float* x, int64_t xs, const float* w, const float* b, float eps, float* out,
                                  int64_t os, int64_t cols) {
    gpu::join_prior_grid();
    const int64_t r = blockIdx.x;
    const float* in = x + r * xs;
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += in[c];
    const float mean = block_sum(sum) / static_cast<float>(cols);
    float spread = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) spread += (in[c] - mean) * (in[c] - mean);
    const float inv = 1.0f / sqrtf(block_sum(spread) / static_cast<float>(cols) + eps);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) out[r * os + c] = (in[c] - mean) * inv * w[c] + b[c];
}

}  // namespace

void add(const Launch& l, const Rows& a, const Rows& b, const Rows& out) {
    const int mode = b.rows == a.rows ? 0 : 1;
    launch_kernel(l, binary_kernel, elementwise_grid(a), kThreads, 0, Binary::add, a.data, a.stride, b.data, b.stride,
                  mode, out.data, out.stride, a.cols, a.rows);
}

void mul(const Launch& l, const Rows& a, const Rows& b, const Rows& out) {
    const int mode = b.cols == a.cols ? (b.rows == a.rows ? 0 : 1) : 2;
    launch_kernel(l, binary_kernel, elementwise_grid(a), kThreads, 0, Binary::mul, a.data, a.stride, b.data, b.stride,
                  mode, out.data, out.stride, a.cols, a.rows);
}

void scale(const Launch& l, const Rows& x, float s, const Rows& out) {
    launch_kernel(l, unary_kernel, elementwise_grid(x), kThreads, 0, Unary::exp, s, x.data, x.stride, out.data,
                  out.stride, x.cols, x.rows, true);
}

void unary(const Launch& l, Unary op, const Rows& x, const Rows& out) {
    launch_kernel(l, unary_kernel, elementwise_grid(x), kThreads, 0, op, 0.0f, x.data, x.stride, out.data, out.stride,
                  x.cols, x.rows, false);
}

void gated_activation(const Launch& l, Gated act, const Rows& gate, const Rows& up, const Rows& out) {
    launch_kernel(l, gated_kernel, elementwise_grid(gate), kThreads, 0, act, gate.data, gate.stride, up.data, up.stride,
                  out.data, out.stride, gate.cols, gate.rows);
}

void rms_norm(const Launch& l, const Rows& x, const float* weight, float eps, const Rows& out, void* q8_1) {
    launch_kernel(l, rms_norm_kernel, static_cast<unsigned>(x.rows), norm_threads(x.cols), 0, x.data, x.stride, weight,
                  nullptr, 0, eps, out.data, out.stride, x.cols, static_cast<ActBlock*>(q8_1));
}

void add_rms_norm(const Launch& l, const Rows& x, const Rows& y, const float* weight, float eps, const Rows& out,
                  void* q8_1) {
    launch_kernel(l, add_rms_norm_kernel, static_cast<unsigned>(x.rows), norm_threads(x.cols), 0, x.data, x.stride,
                  y.data, y.stride, weight, eps, out.data, out.stride, x.cols, static_cast<ActBlock*>(q8_1));
}

void layer_norm(const Launch& l, const Rows& x, const float* weight, const float* bias, float eps, const Rows& out) {
    launch_kernel(l, layer_norm_kernel, static_cast<unsigned>(x.rows), kThreads, 0, x.data, x.stride, weight, bias, eps,
                  out.data, out.stride, x.cols);
}

void rms_norm_gated(const Launch& l, const Rows& x, const float* weight, const Rows& z, float eps, const Rows& out,
                    void* q8_1) {
    launch_kernel(l, rms_norm_kernel, static_cast<unsigned>(x.rows), norm_threads(x.cols), 0, x.data, x.stride, weight,
                  z.data, z.stride, eps, out.data, out.stride, x.cols, static_cast<ActBlock*>(q8_1));
}

void l2_norm(const Launch& l, const Rows& x, int head_dim, float eps, const Rows& out) {
    launch_kernel(l, l2_norm_kernel, static_cast<unsigned>(x.rows), kThreads, 0, x.data, x.stride, head_dim, eps,
                  out.data, out.stride, x.cols);
}

void softmax(const Launch& l, const Rows& x) {
    launch_kernel(l, softmax_kernel, static_cast<unsigned>(x.rows), kThreads, 0, x.data, x.stride, x.cols);
}

void add_expert_bias(const Launch& l, const Rows& bias, const int32_t* ids, int64_t ids_stride, int k,
                     const Rows& out) {
    launch_kernel(l, expert_bias_kernel, elementwise_grid(out), kThreads, 0, bias.data, bias.stride, bias.rows, ids,
                  ids_stride, k, out.data, out.stride, out.cols, out.rows);
}

void moe_combine(const Launch& l, const Rows& y, const Rows& weights, const Rows& out) {
    moe_combine_shared(l, y, weights, Rows{}, Rows{}, out);  // no shared expert: the kernel skips its term
}

void moe_combine_shared(const Launch& l, const Rows& y, const Rows& weights, const Rows& shared, const Rows& gate,
                        const Rows& out) {
    const int k = static_cast<int>(weights.cols);
    launch_kernel(l, moe_combine_kernel, elementwise_grid(out), kThreads, 0, y.data, y.stride, weights.data,
                  weights.stride, k, shared.data, shared.stride, gate.data, gate.stride, out.data, out.stride, out.cols,
                  out.rows);
}

void deltanet_gates(const Launch& l, const Rows& beta, const Rows& alpha, const float* dt_bias, const float* a) {
    launch_kernel(l, deltanet_gates_kernel, elementwise_grid(alpha), kThreads, 0, beta.data, beta.stride, alpha.data,
                  alpha.stride, dt_bias, a, alpha.cols, alpha.rows);
}

}  // namespace ember::gpu_kernels
