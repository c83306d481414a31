// SPDX-License-Identifier: MIT
#include "backend/reference_ops.h"

#include <cmath>

#include "ember/quant.h"

namespace ember::reference {

Matrix dequantize(gguf::TensorType type, std::span<const std::byte> bytes, int64_t rows, int64_t cols) {
    Matrix out(static_cast<size_t>(rows * cols));
    std::vector<float> row(static_cast<size_t>(cols));
    const size_t stride = gguf::row_bytes(type, cols);
    for (int64_t r = 0; r < rows; ++r) {
        quant::dequantize_row(type, bytes.data() + r * stride, row.data(), cols);
        for (int64_t c = 0; c < cols; ++c) out[static_cast<size_t>(r * cols + c)] = row[static_cast<size_t>(c)];
    }
    return out;
}

Matrix matmul(const Matrix& w, int64_t w_rows, int64_t cols, const Matrix& x, int64_t x_rows) {
    Matrix out(static_cast<size_t>(x_rows * w_rows));
    for (int64_t t = 0; t < x_rows; ++t)
        for (int64_t r = 0; r < w_rows; ++r) {
            double s = 0;
            for (int64_t k = 0; k < cols; ++k) s += w[static_cast<size_t>(r * cols + k)] * x[static_cast<size_t>(t * cols + k)];
            out[static_cast<size_t>(t * w_rows + r)] = s;
        }
    return out;
}

Matrix rms_norm(const Matrix& x, int64_t cols, std::span<const double> weight, double eps) {
    Matrix out(x.size());
    for (size_t r = 0; r < x.size() / static_cast<size_t>(cols); ++r) {
        double ss = 0;
        for (int64_t c = 0; c < cols; ++c) ss += x[r * cols + c] * x[r * cols + c];
        const double inv = 1.0 / std::sqrt(ss / static_cast<double>(cols) + eps);
        for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = x[r * cols + c] * inv * weight[static_cast<size_t>(c)];
    }
    return out;
}

Matrix gated_activation(Activation act, const Matrix& gate, const Matrix& up) {
    Matrix out(gate.size());
    for (size_t i = 0; i < gate.size(); ++i) {
        const double g = gate[i];
        const double a = act == Activation::silu
                             ? g / (1.0 + std::exp(-g))
                             : 0.5 * g * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (g + 0.044715 * g * g * g)));
        out[i] = a * up[i];
    }
    return out;
}

void rope(Matrix& x, int64_t cols, int head_dim, std::span<const int32_t> positions, const RopeParams& p,
          std::span<const double> factors) {
    const int half = p.n_rot / 2;
    for (size_t t = 0; t < positions.size(); ++t)
        for (int64_t h = 0; h < cols / head_dim; ++h) {
            double* v = x.data() + t * cols + h * head_dim;
            for (int i = 0; i < half; ++i) {
                double theta = positions[t] * static_cast<double>(p.freq_scale) *
                               std::pow(static_cast<double>(p.freq_base), -2.0 * i / p.n_rot);
                if (!factors.empty()) theta /= factors[static_cast<size_t>(i)];
                const int a = p.mode == RopeMode::normal ? 2 * i : i;
                const int b = p.mode == RopeMode::normal ? 2 * i + 1 : i + half;
                const double x0 = v[a], x1 = v[b];
                v[a] = x0 * std::cos(theta) - x1 * std::sin(theta);
                v[b] = x0 * std::sin(theta) + x1 * std::cos(theta);
            }
        }
}

Matrix attention(const Matrix& q, const Matrix& k_cache, const Matrix& v_cache, int64_t n_kv,
                 std::span<const int32_t> positions, const AttentionParams& p) {
    const int64_t q_cols = int64_t{p.n_head} * p.head_dim;
    const int64_t kv_cols = int64_t{p.n_head_kv} * p.head_dim;
    const int group = p.n_head / p.n_head_kv;
    Matrix out(positions.size() * static_cast<size_t>(q_cols));
    for (size_t t = 0; t < positions.size(); ++t)
        for (int h = 0; h < p.n_head; ++h) {
            const int kv = h / group;
            const int64_t visible = std::min<int64_t>(n_kv, positions[t] + 1);
            std::vector<double> s(static_cast<size_t>(visible));
            double max = -INFINITY;
            for (int64_t j = 0; j < visible; ++j) {
                double d = 0;
                for (int i = 0; i < p.head_dim; ++i)
                    d += q[t * q_cols + h * p.head_dim + i] * k_cache[j * kv_cols + kv * p.head_dim + i];
                s[static_cast<size_t>(j)] = d * p.scale;
                max = std::max(max, s[static_cast<size_t>(j)]);
            }
            double sum = 0;
            for (double& e : s) sum += (e = std::exp(e - max));
            for (int i = 0; i < p.head_dim; ++i) {
                double acc = 0;
                for (int64_t j = 0; j < visible; ++j)
                    acc += s[static_cast<size_t>(j)] * v_cache[j * kv_cols + kv * p.head_dim + i];
                out[t * q_cols + h * p.head_dim + i] = acc / sum;
            }
        }
    return out;
}

void softmax(Matrix& x, int64_t cols) {
    for (size_t r = 0; r < x.size() / static_cast<size_t>(cols); ++r) {
        double max = -INFINITY;
        for (int64_t c = 0; c < cols; ++c) max = std::max(max, x[r * cols + c]);
        double sum = 0;
        for (int64_t c = 0; c < cols; ++c) sum += (x[r * cols + c] = std::exp(x[r * cols + c] - max));
        for (int64_t c = 0; c < cols; ++c) x[r * cols + c] /= sum;
    }
}

}  // namespace ember::reference
