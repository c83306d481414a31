// SPDX-License-Identifier: MIT
// The scalar activation functions of the elementwise kernels and of the products that fuse them (one definition, so
// that a fused kernel rounds exactly as the separate launches it replaces).
#pragma once

#include "gpu_device.cuh"
#include "kernels.h"

namespace ember::gpu_kernels {

__device__ __forceinline__ float silu(float v) { return v / (1.0f + expf(-v)); }
__device__ __forceinline__ float sigmoid(float v) { return 1.0f / (1.0f + expf(-v)); }
__device__ __forceinline__ float softplus(float v) { return v > 20.0f ? v : log1pf(expf(v)); }
__device__ __forceinline__ float gelu_tanh(float v) {
    constexpr float sqrt_2_over_pi = 0.7978845608028654f;
    return 0.5f * v * (1.0f + tanhf(sqrt_2_over_pi * (v + 0.044715f * v * v * v)));
}

// Activation::swiglu_clamped (gpt-oss's experts).
inline constexpr float kSwigluLimit = 7.0f;
inline constexpr float kSwigluAlpha = 1.702f;

__device__ __forceinline__ float gated(Gated act, float g, float u) {
    switch (act) {
        case Gated::silu: return silu(g) * u;
        case Gated::gelu: return gelu_tanh(g) * u;
        default: {
            const float gc = fminf(g, kSwigluLimit);
            return gc * sigmoid(kSwigluAlpha * gc) * (fminf(fmaxf(u, -kSwigluLimit), kSwigluLimit) + 1.0f);
        }
    }
}

// The Gated DeltaNet's log decay g = softplus(alpha + dt_bias) * a (<= 0; qwen35moe.md §5.4 step 5).
__device__ __forceinline__ float deltanet_log_decay(float alpha, float dt_bias, float a) {
    return softplus(alpha + dt_bias) * a;
}

// One head of an L2 norm by the lanes of a warp: out[i] = in[i] / max(|in|, eps) (out may be in).
__device__ __forceinline__ void l2_normalize_head(const float* in, float* out, int head_dim, float eps, int lane) {
    float sum = 0.0f;
    for (int i = lane; i < head_dim; i += gpu::kWarpSize) sum += in[i] * in[i];
    sum = gpu::warp_sum(sum);
    const float inv = 1.0f / fmaxf(sqrtf(sum), eps);
    for (int i = lane; i < head_dim; i += gpu::kWarpSize) out[i] = in[i] * inv;
}

// One term of a mixture-of-experts sum, sum + weight * y as one rounding, and the sigmoid-gated shared expert's term
// (moe_combine and the fused block ends round alike).
__device__ __forceinline__ float combine_term(float weight, float y, float sum) { return fmaf(weight, y, sum); }
__device__ __forceinline__ float combine_shared(float sum, float shared, float gate) {
    return __fadd_rn(sum, __fmul_rn(shared, sigmoid(gate)));
}

}  // namespace ember::gpu_kernels
