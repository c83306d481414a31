// SPDX-License-Identifier: MIT
// Scalar activation functions shared by the CPU backend's operations.
#pragma once

#include <cmath>

namespace ember::cpu_backend {

inline float silu(float x) { return x / (1.0f + std::exp(-x)); }
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
// log(1 + e^x) without overflow for large x.
inline float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }
inline float gelu_tanh(float x) {
    constexpr float sqrt_2_over_pi = 0.7978845608028654f;
    return 0.5f * x * (1.0f + std::tanh(sqrt_2_over_pi * (x + 0.044715f * x * x * x)));
}
inline float gelu_erf(float x) {
    return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
}
// Activation::swiglu_clamped (gpt-oss's experts).
inline constexpr float kSwigluLimit = 7.0f;
inline constexpr float kSwigluAlpha = 1.702f;
inline float swiglu_clamped(float gate, float up) {
    const float g = std::fmin(gate, kSwigluLimit);
    const float u = std::fmax(std::fmin(up, kSwigluLimit), -kSwigluLimit);
    return g * sigmoid(kSwigluAlpha * g) * (u + 1.0f);
}

}  // namespace ember::cpu_backend
