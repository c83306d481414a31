// SPDX-License-Identifier: MIT
// Elementwise and row operations of hybrid (Gated DeltaNet) models: unary activations, per-head L2 norm, the
// gated RMS norm, and the causal depthwise convolution with its carried state.
#include <cmath>
#include <cstring>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_checks.h"
#include "backend/cpu/cpu_math.h"
#include "backend/cpu/host_buffer.h"

namespace ember::cpu_backend {

void CpuBackend::unary(UnaryOp op, const Tensor& x, const Tensor& out) {
    require_f32(x, "unary input");
    require_f32(out, "unary output");
    require_same_shape(x, out, "unary");
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

void CpuBackend::l2_norm(const Tensor& x, int head_dim, float eps, const Tensor& out) {
    require_f32(x, "l2_norm input");
    require_same_shape(x, out, "l2_norm");
    require(head_dim > 0 && x.cols % head_dim == 0, "l2_norm: row length is not a multiple of the head size");
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

void CpuBackend::rms_norm_gated(const Tensor& x, const Tensor& weight, const Tensor& z, float eps,
                                const Tensor& out) {
    require_f32(x, "gated rms_norm input");
    require_f32(weight, "gated rms_norm weight");
    require_f32(z, "gated rms_norm gate");
    require_same_shape(x, out, "gated rms_norm");
    require_same_shape(x, z, "gated rms_norm gate");
    require(weight.rows * weight.cols == x.cols, "gated rms_norm: weight length differs from the row length");
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

void CpuBackend::conv1d_causal(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out) {
    require_f32(x, "conv1d input");
    require_f32(weight, "conv1d weight");
    require_f32(state, "conv1d state");
    require_same_shape(x, out, "conv1d");
    const int64_t channels = x.cols;
    const int64_t kernel = weight.cols;
    require(weight.rows == channels && kernel >= 1, "conv1d: weight must be [channels, kernel]");
    require(state.rows == kernel - 1 && state.cols == channels, "conv1d: state must be [kernel - 1, channels]");
    require(host_data(out) != host_data(x) || kernel == 1, "conv1d: out must not alias the input");
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
