// SPDX-License-Identifier: MIT
// Operations of hybrid (Gated DeltaNet) and mixture-of-experts layers: the causal depthwise convolution with its
// state, the gated delta rule, and top-k expert routing (../shared/specs/qwen35moe.md §5.4, §5.5).
#include "activations.cuh"

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
    const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= channels) return;
    for (int k = 0; k < kernel - 1; ++k)
        state[k * ss + c] = conv_input(x, xs, state, ss, kernel, tokens - (kernel - 1) + k, c);
}

// grid: one block per value head; thread j owns column j of the head's state S[d_k][d_v]. With DK > 0 the column
// lives in registers for the whole batch; DK == 0 is the general form that works on the state in memory.
template <int DK>
__global__ void delta_rule_kernel(DeltaRuleArgs a) {
    extern __shared__ float shared[];  // k[d_k], q[d_k]
    const int p = blockIdx.x;
    const int j = threadIdx.x;
    const int dk = DK > 0 ? DK : a.d_k, dv = a.d_v;
    const int kh = p % a.n_k_heads;
    float* ks = shared;
    float* qs = shared + dk;
    float* S = a.state.data + static_cast<int64_t>(p) * a.state.stride;  // [d_k][d_v]
    float col[DK > 0 ? DK : 1];
    if constexpr (DK > 0) {
#pragma unroll
        for (int i = 0; i < DK; ++i) col[i] = j < dv ? S[i * dv + j] : 0.0f;
    }
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
        if constexpr (DK > 0) {
#pragma unroll
            for (int i = 0; i < DK; ++i) {
                col[i] *= decay;
                r += col[i] * ks[i];
            }
        } else {
            for (int i = 0; i < dk; ++i) {
                const float s = S[i * dv + j] * decay;
                S[i * dv + j] = s;
                r += s * ks[i];
            }
        }
        const float delta = beta * (v - r);
        float o = 0.0f;
        if constexpr (DK > 0) {
#pragma unroll
            for (int i = 0; i < DK; ++i) {
                col[i] += ks[i] * delta;
                o += col[i] * qs[i];
            }
        } else {
            for (int i = 0; i < dk; ++i) {
                const float s = S[i * dv + j] + ks[i] * delta;
                S[i * dv + j] = s;
                o += s * qs[i];
            }
        }
        a.out.data[t * a.out.stride + static_cast<int64_t>(p) * dv + j] = o;
        const int64_t snap = t - (T - a.n_snapshots);
        if (a.snapshots && snap >= 0) {
            float* dst = a.snapshots + snap * static_cast<int64_t>(a.n_v_heads) * dk * dv +
                         static_cast<int64_t>(p) * dk * dv;
            if constexpr (DK > 0) {
#pragma unroll
                for (int i = 0; i < DK; ++i) dst[i * dv + j] = col[i];
            } else {
                for (int i = 0; i < dk; ++i) dst[i * dv + j] = S[i * dv + j];
            }
        }
    }
    if constexpr (DK > 0) {
        if (j < dv)
#pragma unroll
            for (int i = 0; i < DK; ++i) S[i * dv + j] = col[i];
    }
}

// One warp per row of router logits (warps_per_block rows per block, each with its own n_experts probabilities in
// shared memory): softmax over all experts, then k rounds of arg-max (ties to the lower index), then the chosen
// probabilities renormalized. Lane j owns experts j, j + W, ...: only it reads or writes their probabilities, so the
// warp needs no barrier; the shuffles of each round agree on the winner in every lane.
constexpr int kMaxRouteWarps = 4;

__device__ __forceinline__ int shuffle_xor_int(int v, int mask) {
    return __float_as_int(gpu::shuffle_xor(__int_as_float(v), mask));
}

__global__ void moe_route_kernel(const float* logits, int64_t ls, int64_t rows, int64_t n_experts, int k, int32_t* ids,
                                 int64_t ids_stride, float* weights, int64_t ws) {
    constexpr int W = gpu::kWarpSize;
    extern __shared__ float probabilities[];  // [warps per block][n_experts]
    const int warp = static_cast<int>(threadIdx.x) / W, lane = static_cast<int>(threadIdx.x) % W;
    const int64_t t = static_cast<int64_t>(blockIdx.x) * (blockDim.x / W) + warp;
    if (t >= rows) return;
    float* prob = probabilities + warp * n_experts;
    const float* row = logits + t * ls;
    float m = -INFINITY;
    for (int64_t e = lane; e < n_experts; e += W) m = fmaxf(m, row[e]);
    m = gpu::warp_max(m);
    float sum = 0.0f;
    for (int64_t e = lane; e < n_experts; e += W) {
        prob[e] = expf(row[e] - m);
        sum += prob[e];
    }
    const float inv = 1.0f / gpu::warp_sum(sum);
    for (int64_t e = lane; e < n_experts; e += W) prob[e] *= inv;
    for (int round = 0; round < k; ++round) {
        float v = -INFINITY;
        int idx = 0x7fffffff;
        for (int64_t e = lane; e < n_experts; e += W)
            if (prob[e] > v) {  // strictly greater: the lowest index of a tie stays
                v = prob[e];
                idx = static_cast<int>(e);
            }
#pragma unroll
        for (int mask = W / 2; mask > 0; mask >>= 1) {
            const float ov = gpu::shuffle_xor(v, mask);
            const int oi = shuffle_xor_int(idx, mask);
            if (ov > v || (ov == v && oi < idx)) {
                v = ov;
                idx = oi;
            }
        }
        // No expert left above -inf (NaN logits): an id outside the range, which the expert products read as zero.
        const bool found = idx < n_experts;
        if (lane == 0) {  // the chosen probability waits in its weight's place for the renormalization
            ids[t * ids_stride + round] = idx;
            weights[t * ws + round] = found ? v : 0.0f;
        }
        if (found && idx % W == lane) prob[idx] = -INFINITY;
    }
    if (lane == 0) {
        float total = 0.0f;
        for (int j = 0; j < k; ++j) total += weights[t * ws + j];
        total = fmaxf(total, 6.1035e-5f);
        for (int j = 0; j < k; ++j) weights[t * ws + j] /= total;
    }
}

}  // namespace

void conv1d_causal(const Launch& l, const Rows& x, const Rows& weight, const Rows& state, const Rows& out,
                   bool silu) {
    if (x.rows == 0) return;
    const unsigned channel_blocks = static_cast<unsigned>((x.cols + 127) / 128);
    const dim3 grid(channel_blocks, static_cast<unsigned>((x.rows + kConvTokens - 1) / kConvTokens));
    const int kernel = static_cast<int>(weight.cols);
    conv1d_kernel<<<grid, 128, 0, l.stream>>>(x.data, x.stride, x.rows, x.cols, weight.data, weight.stride, kernel,
                                              state.data, state.stride, out.data, out.stride, silu);
    if (grid.y == 1) return;
    conv_state_kernel<<<channel_blocks, 128, 0, l.stream>>>(x.data, x.stride, x.rows, x.cols, kernel, state.data,
                                                            state.stride);
}

void delta_rule(const Launch& l, const DeltaRuleArgs& a) {
    const int threads = (a.d_v + 31) / 32 * 32;
    const size_t shared = 2 * static_cast<size_t>(a.d_k) * sizeof(float);
    const unsigned grid = static_cast<unsigned>(a.n_v_heads);
    switch (a.d_k) {
        case 16: delta_rule_kernel<16><<<grid, threads, shared, l.stream>>>(a); break;
        case 32: delta_rule_kernel<32><<<grid, threads, shared, l.stream>>>(a); break;
        case 64: delta_rule_kernel<64><<<grid, threads, shared, l.stream>>>(a); break;
        case 128: delta_rule_kernel<128><<<grid, threads, shared, l.stream>>>(a); break;
        default: delta_rule_kernel<0><<<grid, threads, shared, l.stream>>>(a); break;
    }
}

void moe_route(const Launch& l, const Rows& logits, int k, int32_t* ids, int64_t ids_stride, const Rows& weights) {
    // As many rows per block as keep the probabilities within 48 KiB of shared memory (the backend allows 12288
    // experts: one row per block).
    const int64_t fit = (48 << 10) / (logits.cols * static_cast<int64_t>(sizeof(float)));
    const int warps = static_cast<int>(fit < 1 ? 1 : fit < kMaxRouteWarps ? fit : kMaxRouteWarps);
    const size_t shared = static_cast<size_t>(warps * logits.cols) * sizeof(float);
    const unsigned grid = static_cast<unsigned>((logits.rows + warps - 1) / warps);
    moe_route_kernel<<<grid, warps * gpu::kWarpSize, shared, l.stream>>>(
        logits.data, logits.stride, logits.rows, logits.cols, k, ids, ids_stride, weights.data, weights.stride);
}

}  // namespace ember::gpu_kernels
