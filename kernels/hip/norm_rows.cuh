// SPDX-License-Identifier: MIT
// One row's residual add and RMS norm by one block (add_rms_norm_row), shared by add_rms_norm's kernel and by the
// product kernels that end with it (moe_down_combine, matvec_integer), so that both round alike bit for bit.
#pragma once

#include <cstdint>

#include "activation_blocks.cuh"
#include "gpu_device.cuh"
#include "kernels.h"
#include "launch_tail.cuh"

namespace ember::gpu_kernels {

// The threads of the RMS norms' launches for rows of `cols`: about two values each, so that a decode step's one-row
// norm is a short chain; whole warps, 64 to 1024. Every RMS norm launches this way, so a fused norm and its parts
// sum alike.
__host__ __device__ constexpr int norm_threads(int64_t cols) {
    const int64_t half = (cols / 2 + gpu::kWarpSize - 1) / gpu::kWarpSize * gpu::kWarpSize;
    return static_cast<int>(half < 2 * gpu::kWarpSize ? 2 * gpu::kWarpSize : half > 1024 ? 1024 : half);
}

// x += y, then out = rms_norm(x) * w, and with q8_1 also out's Q8_1 blocks (cols a multiple of 32). The squares are
// summed as a block of `threads` threads sums them (each its values c = i, i + threads, ..., then each warp's sum,
// then the warps' sums in order), whatever this block's own size: a block of fewer threads plays several of them.
// Y is const float* or, for values other blocks of the same launch wrote, const volatile float*.
template <typename Y>
__device__ void add_rms_norm_row(float* x, Y y, const float* w, float eps, float* out, int64_t cols, ActBlock* q8_1,
                                 int threads) {
    constexpr int W = gpu::kWarpSize;
    __shared__ float partial[1024 / W];
    __syncthreads();  // a previous row's partial sums are read
    for (int first = 0; first < threads; first += static_cast<int>(blockDim.x)) {
        const int i = first + static_cast<int>(threadIdx.x);
        if (i - i % W >= threads) break;  // whole warps past the played threads
        float sum = 0.0f;
        for (int64_t c = i; c < cols; c += threads) {
            const float v = x[c] + y[c];
            x[c] = v;
            sum += v * v;
        }
        sum = gpu::warp_sum(sum);
        if (i % W == 0) partial[i / W] = sum;
    }
    __syncthreads();
    float total = 0.0f;
    for (int j = 0; j < threads / W; ++j) total += partial[j];
    const float inv = 1.0f / sqrtf(total / static_cast<float>(cols) + eps);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        const float v = x[c] * inv * w[c];
        out[c] = v;
        if (q8_1) quantize_activation_block(v, static_cast<int>(c % 32), q8_1 + c / 32);
    }
}

// A product kernel's end (NormTail): its launch's last block adds every token's output row to its residual row and
// normalizes it as add_rms_norm's launch does.
__device__ __forceinline__ void add_rms_norm_in_last_block(const NormTail& n) {
    if (!last_block_of_launch(n.counter)) return;
    const int threads = norm_threads(n.x.cols);
    for (int64_t t = 0; t < n.x.rows; ++t) {
        const volatile float* y = n.y.data + t * n.y.stride;
        add_rms_norm_row(n.x.data + t * n.x.stride, y, n.weight, n.eps, n.out.data + t * n.out.stride, n.x.cols,
                         n.q8_1 ? static_cast<ActBlock*>(n.q8_1) + t * n.x.cols / 32 : nullptr, threads);
    }
    release_tail_counter(n.counter);
}

}  // namespace ember::gpu_kernels
