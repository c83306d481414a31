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

}  // namespace ember::cpu_backend
