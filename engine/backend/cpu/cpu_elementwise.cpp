// SPDX-License-Identifier: MIT
// Row-wise and elementwise operations of the CPU backend (F32 activations).
#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_math.h"
#include "backend/cpu/host_buffer.h"

namespace ember::cpu_backend {

namespace {

float* row_of(const Tensor& t, int64_t r) { return host_row(t, r); }

}  // namespace

void CpuBackend::do_rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) {
    const float* w = host_f32(weight);
    for_rows(x.rows, x.cols, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const float* in = row_of(x, r);
            float* o = row_of(out, r);
            double sum = 0.0;
            for (int64_t i = 0; i < x.cols; ++i) sum += static_cast<double>(in[i]) * in[i];
            const float inv = static_cast<float>(1.0 / std::sqrt(sum / static_cast<double>(x.cols) + eps));
            for (int64_t i = 0; i < x.cols; ++i) o[i] = in[i] * inv * w[i];
        }
    });
}

void CpuBackend::do_layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps,
                               const Tensor& out) {
    const float* w = host_f32(weight);
    const float* b = host_f32(bias);
    for_rows(x.rows, x.cols * 2, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const float* in = row_of(x, r);
            float* o = row_of(out, r);
            double sum = 0.0;
            for (int64_t i = 0; i < x.cols; ++i) sum += in[i];
            const double mean = sum / static_cast<double>(x.cols);
            double ss = 0.0;  // two passes: no cancellation when the mean is large against the spread
            for (int64_t i = 0; i < x.cols; ++i) ss += (in[i] - mean) * (in[i] - mean);
            const auto m = static_cast<float>(mean);
            const auto inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(x.cols) + eps));
            for (int64_t i = 0; i < x.cols; ++i) o[i] = (in[i] - m) * inv * w[i] + b[i];
        }
    });
}

void CpuBackend::do_add(const Tensor& a, const Tensor& b, const Tensor& out) {
    for_rows(a.rows, a.cols, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const float* pa = row_of(a, r);
            const float* pb = row_of(b, b.rows == 1 ? 0 : r);
            float* po = row_of(out, r);
            for (int64_t i = 0; i < a.cols; ++i) po[i] = pa[i] + pb[i];
        }
    });
}

void CpuBackend::do_mul(const Tensor& a, const Tensor& b, const Tensor& out) {
    const bool column = b.cols == 1 && b.rows == a.rows && a.cols != 1;
    for_rows(a.rows, a.cols, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const float* pa = row_of(a, r);
            const float* pb = row_of(b, b.rows == 1 ? 0 : r);
            float* po = row_of(out, r);
            if (column)
                for (int64_t i = 0; i < a.cols; ++i) po[i] = pa[i] * pb[0];
            else
                for (int64_t i = 0; i < a.cols; ++i) po[i] = pa[i] * pb[i];
        }
    });
}

void CpuBackend::do_scale(const Tensor& x, float s, const Tensor& out) {
    for_rows(x.rows, x.cols, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const float* px = row_of(x, r);
            float* po = row_of(out, r);
            for (int64_t i = 0; i < x.cols; ++i) po[i] = px[i] * s;
        }
    });
}

void CpuBackend::do_gated_activation(Activation act, const Tensor& gate, const Tensor& up, const Tensor& out) {
    for_rows(gate.rows, gate.cols * 8, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const float* g = row_of(gate, r);
            const float* u = row_of(up, r);
            float* o = row_of(out, r);
            switch (act) {
                case Activation::silu:
                    for (int64_t i = 0; i < gate.cols; ++i) o[i] = silu(g[i]) * u[i];
                    break;
                case Activation::gelu:
                    for (int64_t i = 0; i < gate.cols; ++i) o[i] = gelu_tanh(g[i]) * u[i];
                    break;
                case Activation::swiglu_clamped:
                    for (int64_t i = 0; i < gate.cols; ++i) o[i] = swiglu_clamped(g[i], u[i]);
                    break;
            }
        }
    });
}

void CpuBackend::do_softmax(const Tensor& x) {
    for_rows(x.rows, x.cols * 4, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            float* p = row_of(x, r);
            float max = -INFINITY;
            for (int64_t i = 0; i < x.cols; ++i) max = std::max(max, p[i]);
            double sum = 0.0;
            for (int64_t i = 0; i < x.cols; ++i) {
                p[i] = std::exp(p[i] - max);
                sum += p[i];
            }
            const float inv = static_cast<float>(1.0 / sum);
            for (int64_t i = 0; i < x.cols; ++i) p[i] *= inv;
        }
    });
}

}  // namespace ember::cpu_backend
