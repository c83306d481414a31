// SPDX-License-Identifier: MIT
// Elementwise and row operations of hybrid (Gated DeltaNet) models: unary activations, per-head L2 norm, the
// gated RMS norm, and the causal depthwise convolution with its carried state.
#include <cmath>
#include <cstring>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_math.h"
#include "backend/cpu/host_buffer.h"

namespace ember::cpu_backend {

void CpuBackend::do_unary(UnaryOp op, const Tensor& x, const Tensor& out) {
    for_rows(x.rows, x.cols * 8, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const float* in = host_row(x, r);
            float* o = host_row(out, r);
            switch (op) {
                case UnaryOp::silu: for (int64_t i = 0; i < x.cols; ++i) o[i] = silu(in[i]); break;
                case UnaryOp::sigmoid: for (int64_t i = 0; i < x.cols; ++i) o[i] = sigmoid(in[i]); break;
                case UnaryOp::softplus: for (int64_t i = 0; i < x.cols; ++i) o[i] = softplus(in[i]); break;
                case UnaryOp::exp: for (int64_t i = 0; i < x.cols; ++i) o[i] = std::exp(in[i]); break;
                case UnaryOp::gelu_tanh:
                    for (int64_t i = 0; i < x.cols; ++i) o[i] = gelu_tanh(in[i]);
                    break;
                case UnaryOp::gelu_erf:
                    for (int64_t i = 0; i < x.cols; ++i) o[i] = gelu_erf(in[i]);
                    break;
            }
        }
    });
}

void CpuBackend::do_l2_norm(const Tensor& x, int head_dim, float eps, const Tensor& out) {
    for_rows(x.rows, x.cols * 2, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const float* in = host_row(x, r);
            float* o = host_row(out, r);
            for (int64_t h = 0; h < x.cols; h += head_dim) {
                double ss = 0.0;
                for (int i = 0; i < head_dim; ++i) ss += static_cast<double>(in[h + i]) * in[h + i];
                const float inv = static_cast<float>(1.0 / std::max(std::sqrt(ss), static_cast<double>(eps)));
                for (int i = 0; i < head_dim; ++i) o[h + i] = in[h + i] * inv;
            }
        }
    });
}

void CpuBackend::do_rms_norm_gated(const Tensor& x, const Tensor& weight, const Tensor& z, float eps,
                                   const Tensor& out) {
    const float* w = host_f32(weight);
    for_rows(x.rows, x.cols * 4, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const float* in = host_row(x, r);
            const float* g = host_row(z, r);
            float* o = host_row(out, r);
            double ss = 0.0;
            for (int64_t i = 0; i < x.cols; ++i) ss += static_cast<double>(in[i]) * in[i];
            const float inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(x.cols) + eps));
            for (int64_t i = 0; i < x.cols; ++i) o[i] = in[i] * inv * w[i] * silu(g[i]);
        }
    });
}

void CpuBackend::do_conv1d_causal(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out) {
    const int64_t channels = x.cols;
    const int64_t kernel = weight.cols;
    const int64_t n = x.rows;
    const float* w = host_f32(weight);
    // Input row i of the extended sequence [state rows..., x rows...].
    auto input = [&](int64_t i) -> const float* {
        return i < kernel - 1 ? host_row(state, i) : host_row(x, i - (kernel - 1));
    };
    for_rows(channels, n * kernel * 2, [&](int64_t begin, int64_t end) {
        for (int64_t t = 0; t < n; ++t) {
            float* o = host_row(out, t);
            for (int64_t c = begin; c < end; ++c) {
                float sum = 0.0f;
                for (int64_t k = 0; k < kernel; ++k) sum += w[c * weight.row_stride / 4 + k] * input(t + k)[c];
                o[c] = sum;
            }
        }
    });
    // The new state: the last kernel - 1 inputs, shifted in place (old state rows first, so copy front to back).
    for (int64_t i = 0; i < kernel - 1; ++i) {
        const float* src = input(n + i);
        std::memmove(host_row(state, i), src, static_cast<size_t>(channels) * 4);
    }
}

}  // namespace ember::cpu_backend
