// SPDX-License-Identifier: MIT
// A mixture-of-experts router's choice for one row of logits by one warp (route_row), shared by moe_route's kernel
// and the router product that routes its own output (moe_router), so that both choose alike bit for bit.
#pragma once

#include <cstdint>

#include "gpu_device.cuh"

namespace ember::gpu_kernels {

__device__ __forceinline__ int shuffle_xor_int(int v, int mask) {
    return __float_as_int(gpu::shuffle_xor(__int_as_float(v), mask));
}

// The warp's largest v and its index idx (ties to the lower index), in every lane.
__device__ __forceinline__ void warp_argmax(float& v, int& idx) {
#pragma unroll
    for (int mask = gpu::kWarpSize / 2; mask > 0; mask >>= 1) {
        const float ov = gpu::shuffle_xor(v, mask);
        const int oi = shuffle_xor_int(idx, mask);
        if (ov > v || (ov == v && oi < idx)) {
            v = ov;
            idx = oi;
        }
    }
}

// Softmax over the row's n_experts logits into prob (n_experts floats of this warp's own; prob may be the row
// itself), then k rounds of arg-max (ties to the lower index), then the chosen probabilities renormalized into
// weights_row[0, k) with their experts in ids_row. Lane j owns experts j, j + W, ...: only it reads or writes their
// probabilities, so the warp needs no barrier; the shuffles of each round agree on the winner in every lane.
__device__ __forceinline__ void route_row(const float* row, int64_t n_experts, int k, float* prob, int lane,
                                          int32_t* ids_row, float* weights_row) {
    constexpr int W = gpu::kWarpSize;
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
        warp_argmax(v, idx);
        // No expert left above -inf (NaN logits): an id outside the range, which the expert products read as zero.
        const bool found = idx < n_experts;
        if (lane == 0) {  // the chosen probability waits in its weight's place for the renormalization
            ids_row[round] = idx;
            weights_row[round] = found ? v : 0.0f;
        }
        if (found && idx % W == lane) prob[idx] = -INFINITY;
    }
    if (lane == 0) {
        float total = 0.0f;
        for (int j = 0; j < k; ++j) total += weights_row[j];
        total = fmaxf(total, 6.1035e-5f);
        for (int j = 0; j < k; ++j) weights_row[j] /= total;
    }
}

}  // namespace ember::gpu_kernels
