// SPDX-License-Identifier: MIT
#include "backend/reference_ops.h"

#include <algorithm>
#include <cmath>

#include "quant/quant.h"

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

Matrix layer_norm(const Matrix& x, int64_t cols, std::span<const double> weight, std::span<const double> bias,
                  double eps) {
    Matrix out(x.size());
    for (size_t r = 0; r < x.size() / static_cast<size_t>(cols); ++r) {
        const double* in = x.data() + r * cols;
        double mean = 0;
        for (int64_t c = 0; c < cols; ++c) mean += in[c];
        mean /= static_cast<double>(cols);
        double var = 0;
        for (int64_t c = 0; c < cols; ++c) var += (in[c] - mean) * (in[c] - mean);
        var /= static_cast<double>(cols);
        for (int64_t c = 0; c < cols; ++c)
            out[r * cols + c] =
                (in[c] - mean) / std::sqrt(var + eps) * weight[static_cast<size_t>(c)] + bias[static_cast<size_t>(c)];
    }
    return out;
}

Matrix gated_activation(Activation act, const Matrix& gate, const Matrix& up) {
    Matrix out(gate.size());
    for (size_t i = 0; i < gate.size(); ++i) {
        const double g = gate[i];
        switch (act) {
            case Activation::silu: out[i] = g / (1.0 + std::exp(-g)) * up[i]; break;
            case Activation::gelu:
                out[i] = 0.5 * g * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (g + 0.044715 * g * g * g))) * up[i];
                break;
            case Activation::swiglu_clamped: {
                const double gc = std::min(g, 7.0), uc = std::clamp(up[i], -7.0, 7.0);
                out[i] = gc / (1.0 + std::exp(-1.702 * gc)) * (uc + 1.0);
                break;
            }
        }
    }
    return out;
}

void rope(Matrix& x, int64_t cols, int head_dim, std::span<const int32_t> positions, const RopeParams& p,
          std::span<const double> factors) {
    const int half = p.n_rot / 2;
    const bool multi = p.mode == RopeMode::multi_interleaved, vision = p.mode == RopeMode::vision;
    const size_t rows = positions.size() / (multi ? 3 : vision ? 2 : 1);
    for (size_t t = 0; t < rows; ++t)
        for (int64_t h = 0; h < cols / head_dim; ++h) {
            double* v = x.data() + t * cols + h * head_dim;
            for (int i = 0; i < half; ++i) {
                size_t axis = 0;
                double freq = std::pow(static_cast<double>(p.freq_base), -2.0 * i / p.n_rot);
                if (multi) axis = (i % 3 == 1 && i < 3 * p.sections[1]) ? 1 : (i % 3 == 2 && i < 3 * p.sections[2]) ? 2 : 0;
                if (vision) {  // two halves of n_rot/4 pairs: the row's frequencies, then the column's
                    const int q = p.n_rot / 4;
                    axis = i < q ? 0 : 1;
                    freq = std::pow(static_cast<double>(p.freq_base), -static_cast<double>(i % q) / q);
                }
                double theta = positions[axis * rows + t] * static_cast<double>(p.freq_scale) * freq;
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
                 std::span<const int32_t> positions, const AttentionParams& p, std::span<const double> sinks) {
    const int64_t q_cols = int64_t{p.n_head} * p.head_dim;
    const int64_t kv_cols = int64_t{p.n_head_kv} * p.head_dim;
    const int group = p.n_head / p.n_head_kv;
    Matrix out(positions.size() * static_cast<size_t>(q_cols));
    for (size_t t = 0; t < positions.size(); ++t)
        for (int h = 0; h < p.n_head; ++h) {
            const int kv = h / group;
            const int64_t visible = std::min<int64_t>(n_kv, positions[t] + 1);
            // The window written out here rather than through first_visible_row, so that the rule is checked too.
            const int64_t first = p.window > 0 ? std::max<int64_t>(0, positions[t] - p.window + 1) : 0;
            std::vector<double> s(static_cast<size_t>(visible));
            double max = -INFINITY;
            for (int64_t j = first; j < visible; ++j) {
                double d = 0;
                for (int i = 0; i < p.head_dim; ++i)
                    d += q[t * q_cols + h * p.head_dim + i] * k_cache[j * kv_cols + kv * p.head_dim + i];
                s[static_cast<size_t>(j)] = d * p.scale;
                max = std::max(max, s[static_cast<size_t>(j)]);
            }
            // A sink joins the softmax with a logit but no value.
            const bool sink = !sinks.empty();
            if (sink) max = std::max(max, sinks[static_cast<size_t>(h)]);
            double sum = sink ? std::exp(sinks[static_cast<size_t>(h)] - max) : 0.0;
            for (int64_t j = first; j < visible; ++j)
                sum += (s[static_cast<size_t>(j)] = std::exp(s[static_cast<size_t>(j)] - max));
            for (int i = 0; i < p.head_dim; ++i) {
                double acc = 0;
                for (int64_t j = first; j < visible; ++j)
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

double unary(UnaryOp op, double x) {
    switch (op) {
        case UnaryOp::silu: return x / (1.0 + std::exp(-x));
        case UnaryOp::sigmoid: return 1.0 / (1.0 + std::exp(-x));
        case UnaryOp::softplus: return std::log1p(std::exp(x));
        case UnaryOp::exp: return std::exp(x);
        case UnaryOp::gelu_tanh:
            return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
        case UnaryOp::gelu_erf:
            return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    }
    return 0;
}

Matrix l2_norm(const Matrix& x, int head_dim, double eps) {
    Matrix out(x.size());
    for (size_t h = 0; h < x.size(); h += static_cast<size_t>(head_dim)) {
        double ss = 0;
        for (int i = 0; i < head_dim; ++i) ss += x[h + i] * x[h + i];
        const double inv = 1.0 / std::max(std::sqrt(ss), eps);
        for (int i = 0; i < head_dim; ++i) out[h + i] = x[h + i] * inv;
    }
    return out;
}

Matrix rms_norm_gated(const Matrix& x, int64_t cols, std::span<const double> weight, const Matrix& z, double eps) {
    Matrix out = rms_norm(x, cols, weight, eps);
    for (size_t i = 0; i < out.size(); ++i) out[i] *= unary(UnaryOp::silu, z[i]);
    return out;
}

Matrix conv1d_causal(const Matrix& x, int64_t channels, const Matrix& weight, int64_t kernel, Matrix& state) {
    Matrix seq = state;
    seq.insert(seq.end(), x.begin(), x.end());
    const int64_t n = static_cast<int64_t>(x.size()) / channels;
    Matrix out(x.size());
    for (int64_t t = 0; t < n; ++t)
        for (int64_t c = 0; c < channels; ++c) {
            double sum = 0;
            for (int64_t k = 0; k < kernel; ++k) sum += weight[c * kernel + k] * seq[(t + k) * channels + c];
            out[t * channels + c] = sum;
        }
    state.assign(seq.end() - (kernel - 1) * channels, seq.end());
    return out;
}

Matrix delta_rule(const Matrix& q, const Matrix& k, const Matrix& v, const Matrix& g, const Matrix& beta,
                  Matrix& state, int64_t tokens, int hk, int hv, int dk, int dv, double q_scale, int64_t n_snapshots,
                  Matrix* snapshots) {
    Matrix out(static_cast<size_t>(tokens) * hv * dv);
    if (snapshots) snapshots->assign(static_cast<size_t>(n_snapshots) * state.size(), 0.0);
    for (int64_t t = 0; t < tokens; ++t) {
        for (int h = 0; h < hv; ++h) {
            const int kh = h % hk;
            double* S = state.data() + static_cast<size_t>(h) * dk * dv;
            const double decay = std::exp(g[t * hv + h]);
            for (int i = 0; i < dk * dv; ++i) S[i] *= decay;
            for (int j = 0; j < dv; ++j) {
                double r = 0;
                for (int i = 0; i < dk; ++i) r += S[i * dv + j] * k[t * hk * dk + kh * dk + i];
                const double delta = beta[t * hv + h] * (v[t * hv * dv + h * dv + j] - r);
                for (int i = 0; i < dk; ++i) S[i * dv + j] += k[t * hk * dk + kh * dk + i] * delta;
            }
            for (int j = 0; j < dv; ++j) {
                double o = 0;
                for (int i = 0; i < dk; ++i) o += S[i * dv + j] * q[t * hk * dk + kh * dk + i] * q_scale;
                out[t * hv * dv + h * dv + j] = o;
            }
        }
        const int64_t snap = t - (tokens - n_snapshots);
        if (snapshots && snap >= 0) std::copy(state.begin(), state.end(), snapshots->begin() + snap * state.size());
    }
    return out;
}

void moe_route(const Matrix& logits, int64_t experts, int k, std::vector<int32_t>& ids, Matrix& weights) {
    const int64_t tokens = static_cast<int64_t>(logits.size()) / experts;
    ids.clear();
    weights.clear();
    for (int64_t t = 0; t < tokens; ++t) {
        Matrix p(logits.begin() + t * experts, logits.begin() + (t + 1) * experts);
        softmax(p, experts);
        std::vector<int32_t> order(static_cast<size_t>(experts));
        for (int32_t e = 0; e < experts; ++e) order[static_cast<size_t>(e)] = e;
        std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return p[a] > p[b]; });
        double sum = 0;
        for (int j = 0; j < k; ++j) sum += p[order[j]];
        for (int j = 0; j < k; ++j) {
            ids.push_back(order[j]);
            weights.push_back(p[order[j]] / std::max(sum, 6.1035e-5));
        }
    }
}

Matrix matmul_experts(const Matrix& w, int64_t rows, int64_t cols, std::span<const int32_t> ids,
                      const std::vector<float>& x, bool per_slot, int k) {
    const auto slots = static_cast<int64_t>(ids.size());
    Matrix out(static_cast<size_t>(slots * rows));
    for (int64_t slot = 0; slot < slots; ++slot) {
        const int64_t e = ids[static_cast<size_t>(slot)], src = per_slot ? slot : slot / k;
        for (int64_t r = 0; r < rows; ++r) {
            double sum = 0;
            for (int64_t c = 0; c < cols; ++c) sum += w[(e * rows + r) * cols + c] * x[src * cols + c];
            out[slot * rows + r] = sum;
        }
    }
    return out;
}

}  // namespace ember::reference
