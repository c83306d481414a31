// SPDX-License-Identifier: MIT
// Operations of hybrid (Gated DeltaNet) and mixture-of-experts layers: the causal depthwise convolution with its
// state, the gated delta rule, and top-k expert routing (../shared/specs/qwen35moe.md §5.4, §5.5).
#include "activation_blocks.cuh"
#include "activations.cuh"
#include "kernel_launch.cuh"
#include "route_rows.cuh"

namespace ember::gpu_kernels {

namespace {

constexpr int kMaxConvKernel = 8;

constexpr int kConvTokens = 16;  // tokens per thread of conv1d_kernel

// Input t of the sequence [state (K - 1 rows) | batch]: t < 0 reads the state row K - 1 + t.
__device__ __forceinline__ float conv_input(const float* x, int64_t xs, const float* state, int64_t ss, int kernel,
                                            int64_t t, int64_t c) {
    return t >= 0 ? x[t * xs + c] : state[(kernel - 1 + t) * ss + c];
}

// grid (channels / 128, token chunks): a thread computes kConvTokens outputs of one channel, its window of the
// previous K - 1 inputs read from the batch or the state. With several chunks the state is only read here
// (conv_state_kernel writes it afterwards), so chunks run in any order; a single chunk (decode, verify) leaves the
// last K - 1 inputs in its window and writes the state itself.
__global__ void conv1d_kernel(const float* x, int64_t xs, int64_t tokens, int64_t channels, const float* w, int64_t ws,
                              int kernel, float* state, int64_t ss, float* out, int64_t os, bool silu) {
    gpu::join_prior_grid();
    const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int64_t t0 = static_cast<int64_t>(blockIdx.y) * kConvTokens;
    if (c >= channels) return;
    float window[kMaxConvKernel];
    float weight[kMaxConvKernel];
#pragma unroll
    for (int k = 0; k < kMaxConvKernel; ++k) {
        window[k] = k < kernel - 1 ? conv_input(x, xs, state, ss, kernel, t0 - (kernel - 1) + k, c) : 0.0f;
        weight[k] = k < kernel ? w[c * ws + k] : 0.0f;
    }
    const int64_t end = t0 + kConvTokens < tokens ? t0 + kConvTokens : tokens;
    for (int64_t t = t0; t < end; ++t) {
        const float in = x[t * xs + c];
        float sum = 0.0f;
#pragma unroll
        for (int k = 0; k < kMaxConvKernel - 1; ++k)
            if (k < kernel - 1) sum += weight[k] * window[k];
        sum += weight[kernel - 1] * in;
        out[t * os + c] = silu ? gpu_kernels::silu(sum) : sum;
#pragma unroll
        for (int k = 0; k < kMaxConvKernel - 1; ++k)
            if (k < kernel - 2) window[k] = window[k + 1];
        window[kernel - 2] = in;
    }
    if (gridDim.y == 1) {
#pragma unroll
        for (int k = 0; k < kMaxConvKernel - 1; ++k)
            if (k < kernel - 1) state[k * ss + c] = window[k];
    }
}

// The state after the batch: the last K - 1 inputs of [state | batch], one thread per channel (rows in increasing
// order, so a state row is read before it is overwritten).
__global__ void conv_state_kernel(const float* x, int64_t xs, int64_t tokens, int64_t channels, int kernel,
                                  float* state, int64_t ss) {
    gpu::join_prior_grid();
    const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= channels) return;
    for (int k = 0; k < kernel - 1; ++k)
        state[k * ss + c] = conv_input(x, xs, state, ss, kernel, tokens - (kernel - 1) + k, c);
}

// The general form (any d_k): one block per value head, thread j owns column j of the head's state S[d_k][d_v] and
// works on it in memory.
__global__ void delta_rule_kernel(DeltaRuleArgs a) {
    gpu::join_prior_grid();
    extern __shared__ float shared[];  // k[d_k], q[d_k]
    const int p = blockIdx.x;
    const int j = threadIdx.x;
    const int dk = a.d_k, dv = a.d_v;
    const int kh = p % a.n_k_heads;
    float* ks = shared;
    float* qs = shared + dk;
    float* S = a.state.data + static_cast<int64_t>(p) * a.state.stride;  // [d_k][d_v]
    const int64_t T = a.q.rows;
    for (int64_t t = 0; t < T; ++t) {
        __syncthreads();
        for (int i = threadIdx.x; i < dk; i += blockDim.x) {
            ks[i] = a.k.data[t * a.k.stride + kh * dk + i];
            qs[i] = a.q.data[t * a.q.stride + kh * dk + i] * a.q_scale;
        }
        __syncthreads();
        if (j >= dv) continue;
        const float decay = expf(a.g.data[t * a.g.stride + p]);
        const float beta = a.beta.data[t * a.beta.stride + p];
        const float v = a.v.data[t * a.v.stride + static_cast<int64_t>(p) * dv + j];
        float r = 0.0f;
        for (int i = 0; i < dk; ++i) {
            const float s = S[i * dv + j] * decay;
            S[i * dv + j] = s;
            r += s * ks[i];
        }
        const float delta = beta * (v - r);
        float o = 0.0f;
        for (int i = 0; i < dk; ++i) {
            const float s = S[i * dv + j] + ks[i] * delta;
            S[i * dv + j] = s;
            o += s * qs[i];
        }
        a.out.data[t * a.out.stride + static_cast<int64_t>(p) * dv + j] = o;
        const int64_t snap = t - (T - a.n_snapshots);
        if (a.snapshots && snap >= 0) {
            float* dst = a.snapshots + snap * static_cast<int64_t>(a.n_v_heads) * dk * dv +
                         static_cast<int64_t>(p) * dk * dv;
            for (int i = 0; i < dk; ++i) dst[i * dv + j] = S[i * dv + j];
        }
    }
}

// The delta rule over many tokens (prefill) with the state in registers and no barrier: a column's d_k state values
// are split over kDeltaSlices adjacent lanes (lane slice s holds rows s, s + 8, ...), so a token's two sums are
// DK / 8 multiply-adds and three shuffles instead of DK dependent ones. grid (value heads, column groups of
// kDeltaColumns); each thread loads the next token's inputs before it works on the current one. Lanes past d_v
// compute on zeros to keep the shuffles whole.
constexpr int kDeltaSlices = 8;
constexpr int kDeltaThreads = 128;
constexpr int kDeltaColumns = kDeltaThreads / kDeltaSlices;

template <int DK>
__global__ __launch_bounds__(kDeltaThreads) void delta_rule_sliced_kernel(DeltaRuleArgs a) {
    gpu::join_prior_grid();
    constexpr int M = DK / kDeltaSlices;
    const int p = blockIdx.x, dv = a.d_v, kh = p % a.n_k_heads;
    const int slice = threadIdx.x % kDeltaSlices;
    const int j = blockIdx.y * kDeltaColumns + threadIdx.x / kDeltaSlices;
    const bool owner = j < dv;
    const int jc = owner ? j : 0;
    float* S = a.state.data + static_cast<int64_t>(p) * a.state.stride;  // [d_k][d_v]
    float s[M];
#pragma unroll
    for (int m = 0; m < M; ++m) s[m] = owner ? S[(slice + kDeltaSlices * m) * dv + jc] : 0.0f;
    struct Inputs {
        float k[M], q[M], v, g, beta;
    };
    const auto load = [&](int64_t t, Inputs& in) {
        const float* k = a.k.data + t * a.k.stride + static_cast<int64_t>(kh) * DK + slice;
        const float* q = a.q.data + t * a.q.stride + static_cast<int64_t>(kh) * DK + slice;
#pragma unroll
        for (int m = 0; m < M; ++m) {
            in.k[m] = k[kDeltaSlices * m];
            in.q[m] = q[kDeltaSlices * m] * a.q_scale;
        }
        in.v = owner ? a.v.data[t * a.v.stride + static_cast<int64_t>(p) * dv + jc] : 0.0f;
        in.g = a.g.data[t * a.g.stride + p];
        in.beta = a.beta.data[t * a.beta.stride + p];
    };
    const auto slice_sum = [](float x) {
#pragma unroll
        for (int mask = 1; mask < kDeltaSlices; mask <<= 1) x += gpu::shuffle_xor(x, mask);
        return x;
    };
    const int64_t T = a.q.rows;
    Inputs cur;
    if (T > 0) load(0, cur);
    for (int64_t t = 0; t < T; ++t) {
        Inputs next;
        if (t + 1 < T) load(t + 1, next);
        const float decay = expf(cur.g);
        float r = 0.0f;
#pragma unroll
        for (int m = 0; m < M; ++m) {
            s[m] *= decay;
            r += s[m] * cur.k[m];
        }
        const float delta = cur.beta * (cur.v - slice_sum(r));
        float o = 0.0f;
#pragma unroll
        for (int m = 0; m < M; ++m) {
            s[m] += cur.k[m] * delta;
            o += s[m] * cur.q[m];
        }
        o = slice_sum(o);
        if (owner && slice == 0) a.out.data[t * a.out.stride + static_cast<int64_t>(p) * dv + j] = o;
        const int64_t snap = t - (T - a.n_snapshots);
        if (a.snapshots && snap >= 0 && owner) {
            float* dst = a.snapshots + snap * static_cast<int64_t>(a.n_v_heads) * DK * dv +
                         static_cast<int64_t>(p) * DK * dv;
#pragma unroll
            for (int m = 0; m < M; ++m) dst[(slice + kDeltaSlices * m) * dv + j] = s[m];
        }
        if (t + 1 < T) cur = next;
    }
    if (owner)
#pragma unroll
        for (int m = 0; m < M; ++m) S[(slice + kDeltaSlices * m) * dv + j] = s[m];
}

// The convolution width deltanet_recurrent takes (the Gated DeltaNet's, qwen35moe.md §5.4).
constexpr int kDeltaNetConv = 4;

// deltanet_recurrent's kernel: thread (r, j) = (threadIdx.x / d_v, threadIdx.x % d_v) owns column j of value head
// p = kh + r * n_k_heads (delta_rule_kernel's pairing of value and key heads), the convolution of that head's v channel
// j, and (threads below 2 * DK) the convolution of q (then k) channel threadIdx.x of key head kh.
template <int DK, int K>
__global__ void deltanet_recurrent_kernel(DeltaNetStepArgs a) {
    gpu::join_prior_grid();
    constexpr int W = gpu::kWarpSize;
    extern __shared__ float shared[];  // q[DK], k[DK], then one partial sum per warp
    float* qk = shared;
    float* partial = shared + 2 * DK;
    const DeltaRuleArgs& rule = a.rule;
    const int kh = blockIdx.x, dv = rule.d_v;
    const int r = threadIdx.x / dv, j = threadIdx.x % dv, warp = threadIdx.x / W, lane = threadIdx.x % W;
    const int p = kh + r * rule.n_k_heads;
    const bool owns_qk = threadIdx.x < 2 * DK;
    const int64_t qk_channel = threadIdx.x < DK ? a.q_channel + static_cast<int64_t>(kh) * DK + threadIdx.x
                                                : a.k_channel + static_cast<int64_t>(kh) * DK + (threadIdx.x - DK);
    const int64_t v_channel = a.v_channel + static_cast<int64_t>(p) * dv + j;
    // The convolution windows (the last K - 1 inputs, oldest first) and weights, as conv1d_kernel holds them.
    float qk_window[K - 1], qk_weight[K], v_window[K - 1], v_weight[K];
#pragma unroll
    for (int i = 0; i < K; ++i) {
        if (i < K - 1) {
            qk_window[i] = owns_qk ? a.conv_state.data[i * a.conv_state.stride + qk_channel] : 0.0f;
            v_window[i] = a.conv_state.data[i * a.conv_state.stride + v_channel];
        }
        qk_weight[i] = owns_qk ? a.conv_weight.data[qk_channel * a.conv_weight.stride + i] : 0.0f;
        v_weight[i] = a.conv_weight.data[v_channel * a.conv_weight.stride + i];
    }
    float* S = rule.state.data + static_cast<int64_t>(p) * rule.state.stride;  // [d_k][d_v]
    float col[DK];
#pragma unroll
    for (int i = 0; i < DK; ++i) col[i] = S[i * dv + j];
    const float dt_bias = a.dt_bias[p], decay_scale = a.a[p], norm_weight = a.norm[j];
    const int64_t T = rule.out.rows;
    const auto convolve = [](float (&window)[K - 1], const float (&weight)[K], float in) {
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < K - 1; ++i) sum += weight[i] * window[i];
        sum += weight[K - 1] * in;
#pragma unroll
        for (int i = 0; i < K - 2; ++i) window[i] = window[i + 1];
        window[K - 2] = in;
        return silu(sum);
    };
    for (int64_t t = 0; t < T; ++t) {
        const float* mix = a.mix.data + t * a.mix.stride;
        if (owns_qk) qk[threadIdx.x] = convolve(qk_window, qk_weight, mix[qk_channel]);
        const float v = convolve(v_window, v_weight, mix[v_channel]);
        __syncthreads();
        if (warp < 2) l2_normalize_head(qk + warp * DK, qk + warp * DK, DK, a.l2_eps, lane);  // q, then k
        __syncthreads();
        // deltanet_gates, then delta_rule_kernel's step.
        const float beta = sigmoid(rule.beta.data[t * rule.beta.stride + p]);
        const float g = deltanet_log_decay(rule.g.data[t * rule.g.stride + p], dt_bias, decay_scale);
        const float decay = expf(g);
        float rr = 0.0f;
#pragma unroll
        for (int i = 0; i < DK; ++i) {
            col[i] *= decay;
            rr += col[i] * qk[DK + i];
        }
        const float delta = beta * (v - rr);
        float o = 0.0f;
#pragma unroll
        for (int i = 0; i < DK; ++i) {
            col[i] += qk[DK + i] * delta;
            o += col[i] * (qk[i] * rule.q_scale);
        }
        const int64_t snap = t - (T - rule.n_snapshots);
        if (rule.snapshots && snap >= 0) {
            float* dst = rule.snapshots + snap * static_cast<int64_t>(rule.n_v_heads) * DK * dv +
                         static_cast<int64_t>(p) * DK * dv;
#pragma unroll
            for (int i = 0; i < DK; ++i) dst[i * dv + j] = col[i];
        }
        // The head's gated RMS norm: warps of one head sum their squares in order.
        const float square = gpu::warp_sum(o * o);
        if (lane == 0) partial[warp] = square;
        __syncthreads();
        const int head_warps = dv / W;
        float sum = 0.0f;
        for (int w = 0; w < head_warps; ++w) sum += partial[r * head_warps + w];
        const float inv = 1.0f / sqrtf(sum / static_cast<float>(dv) + a.norm_eps);
        const int64_t column = static_cast<int64_t>(p) * dv + j;
        const float y = o * inv * norm_weight * silu(a.z.data[t * a.z.stride + column]);
        rule.out.data[t * rule.out.stride + column] = y;
        if (a.q8_1)
            quantize_activation_block(y, j % 32,
                                      static_cast<ActBlock*>(a.q8_1) + (t * rule.out.cols + column) / 32);
    }
#pragma unroll
    for (int i = 0; i < DK; ++i) S[i * dv + j] = col[i];
#pragma unroll
    for (int i = 0; i < K - 1; ++i) {
        if (owns_qk) a.conv_state.data[i * a.conv_state.stride + qk_channel] = qk_window[i];
        a.conv_state.data[i * a.conv_state.stride + v_channel] = v_window[i];
    }
}

// One warp per row of router logits (kMaxRouteWarps rows per block, each with its own n_experts probabilities in
// shared memory): route_rows.cuh's route_row.
constexpr int kMaxRouteWarps = 4;

__global__ void moe_route_kernel(const float* logits, int64_t ls, int64_t rows, int64_t n_experts, int k, int32_t* ids,
                                 int64_t ids_stride, float* weights, int64_t ws) {
    gpu::join_prior_grid();
    constexpr int W = gpu::kWarpSize;
    extern __shared__ float probabilities[];  // [warps per block][n_experts]
    const int warp = static_cast<int>(threadIdx.x) / W, lane = static_cast<int>(threadIdx.x) % W;
    const int64_t t = static_cast<int64_t>(blockIdx.x) * (blockDim.x / W) + warp;
    if (t >= rows) return;
    route_row(logits + t * ls, n_experts, k, probabilities + warp * n_experts, lane, ids + t * ids_stride,
              weights + t * ws);
}

// moe_route_kernel with each lane's probabilities in registers (NPL per lane: n_experts <= NPL * W, k <= W): the same
// softmax, the same rounds of selection and the same renormalization, value for value. Lane j keeps round j's
// probability; the total is summed in round order as moe_route_kernel's lane 0 sums it.
template <int NPL>
__global__ void moe_route_registers_kernel(const float* logits, int64_t ls, int64_t rows, int n_experts, int k,
                                           int32_t* ids, int64_t ids_stride, float* weights, int64_t ws) {
    gpu::join_prior_grid();
    constexpr int W = gpu::kWarpSize;
    const int warp = static_cast<int>(threadIdx.x) / W, lane = static_cast<int>(threadIdx.x) % W;
    const int64_t t = static_cast<int64_t>(blockIdx.x) * (blockDim.x / W) + warp;
    if (t >= rows) return;
    const float* row = logits + t * ls;
    float p[NPL];
    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < NPL; ++i) {
        p[i] = lane + i * W < n_experts ? row[lane + i * W] : -INFINITY;
        m = fmaxf(m, p[i]);
    }
    m = gpu::warp_max(m);
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < NPL; ++i)
        if (lane + i * W < n_experts) {
            p[i] = expf(p[i] - m);
            sum += p[i];
        }
    const float inv = 1.0f / gpu::warp_sum(sum);
#pragma unroll
    for (int i = 0; i < NPL; ++i)
        if (lane + i * W < n_experts) p[i] *= inv;
    float chosen = 0.0f;
    for (int round = 0; round < k; ++round) {
        float v = -INFINITY;
        int idx = 0x7fffffff;
#pragma unroll
        for (int i = 0; i < NPL; ++i)
            if (p[i] > v) {  // strictly greater: the lowest index of a tie stays
                v = p[i];
                idx = lane + i * W;
            }
        warp_argmax(v, idx);
        const bool found = idx < n_experts;
        if (lane == 0) ids[t * ids_stride + round] = idx;
        if (lane == round) chosen = found ? v : 0.0f;
#pragma unroll
        for (int i = 0; i < NPL; ++i)
            if (found && idx == lane + i * W) p[i] = -INFINITY;
    }
    float total = 0.0f;
    for (int j = 0; j < k; ++j) total += gpu::shuffle(chosen, j);
    total = fmaxf(total, 6.1035e-5f);
    if (lane < k) weights[t * ws + lane] = chosen / total;
}

}  // namespace

void conv1d_causal(const Launch& l, const Rows& x, const Rows& weight, const Rows& state, const Rows& out,
                   bool silu) {
    if (x.rows == 0) return;
    const unsigned channel_blocks = static_cast<unsigned>((x.cols + 127) / 128);
    const dim3 grid(channel_blocks, static_cast<unsigned>((x.rows + kConvTokens - 1) / kConvTokens));
    const int kernel = static_cast<int>(weight.cols);
    launch_kernel(l, conv1d_kernel, grid, 128, 0, x.data, x.stride, x.rows, x.cols, weight.data, weight.stride, kernel,
                  state.data, state.stride, out.data, out.stride, silu);
    if (grid.y == 1) return;
    launch_kernel(l, conv_state_kernel, channel_blocks, 128, 0, x.data, x.stride, x.rows, x.cols, kernel, state.data,
                  state.stride);
}

void delta_rule(const Launch& l, const DeltaRuleArgs& a) {
    const dim3 sliced(static_cast<unsigned>(a.n_v_heads), static_cast<unsigned>((a.d_v + kDeltaColumns - 1) / kDeltaColumns));
    const auto launch = [&]<int DK>() { launch_kernel(l, delta_rule_sliced_kernel<DK>, sliced, kDeltaThreads, 0, a); };
    switch (a.d_k) {
        case 16:
            return launch.template operator()<16>();
        case 32:
            return launch.template operator()<32>();
        case 64:
            return launch.template operator()<64>();
        case 128:
            return launch.template operator()<128>();
        default: break;
    }
    const int threads = (a.d_v + 31) / 32 * 32;
    const size_t shared = 2 * static_cast<size_t>(a.d_k) * sizeof(float);
    launch_kernel(l, delta_rule_kernel, static_cast<unsigned>(a.n_v_heads), threads, shared, a);
}

bool deltanet_recurrent_fits(int n_k_heads, int n_v_heads, int d_k, int d_v, int conv_kernel) {
    if (n_k_heads <= 0 || n_v_heads % n_k_heads != 0 || (d_k != 64 && d_k != 128) || d_v % gpu::kWarpSize != 0)
        return false;
    const int threads = n_v_heads / n_k_heads * d_v;
    return threads >= 2 * d_k && threads >= 2 * gpu::kWarpSize && threads <= 1024 && conv_kernel == kDeltaNetConv;
}

void deltanet_recurrent(const Launch& l, const DeltaNetStepArgs& a) {
    const DeltaRuleArgs& r = a.rule;
    const int threads = r.n_v_heads / r.n_k_heads * r.d_v;
    const size_t shared = (2 * static_cast<size_t>(r.d_k) + threads / gpu::kWarpSize) * sizeof(float);
    const unsigned grid = static_cast<unsigned>(r.n_k_heads);
    if (r.d_k == 64)
        launch_kernel(l, deltanet_recurrent_kernel<64, kDeltaNetConv>, grid, threads, shared, a);
    else
        launch_kernel(l, deltanet_recurrent_kernel<128, kDeltaNetConv>, grid, threads, shared, a);
}

void moe_route(const Launch& l, const Rows& logits, int k, int32_t* ids, int64_t ids_stride, const Rows& weights) {
    constexpr int W = gpu::kWarpSize;
    if (k <= W && logits.cols <= 16 * W) {
        const unsigned grid = static_cast<unsigned>((logits.rows + kMaxRouteWarps - 1) / kMaxRouteWarps);
        const auto launch = [&]<int NPL>() {
            launch_kernel(l, moe_route_registers_kernel<NPL>, grid, kMaxRouteWarps * W, 0, logits.data, logits.stride,
                          logits.rows, static_cast<int>(logits.cols), k, ids, ids_stride, weights.data, weights.stride);
        };
        if (logits.cols <= 2 * W)
            launch.template operator()<2>();
        else if (logits.cols <= 4 * W)
            launch.template operator()<4>();
        else if (logits.cols <= 8 * W)
            launch.template operator()<8>();
        else
            launch.template operator()<16>();
        return;
    }
    // As many rows per block as keep the probabilities within 48 KiB of shared memory (the backend allows 12288
    // experts: one row per block).
    const int64_t fit = (48 << 10) / (logits.cols * static_cast<int64_t>(sizeof(float)));
    const int warps = static_cast<int>(fit < 1 ? 1 : fit < kMaxRouteWarps ? fit : kMaxRouteWarps);
    const size_t shared = static_cast<size_t>(warps * logits.cols) * sizeof(float);
    const unsigned grid = static_cast<unsigned>((logits.rows + warps - 1) / warps);
    launch_kernel(l, moe_route_kernel, grid, warps * gpu::kWarpSize, shared, logits.data, logits.stride, logits.rows,
                  logits.cols, k, ids, ids_stride, weights.data, weights.stride);
}

}  // namespace ember::gpu_kernels
