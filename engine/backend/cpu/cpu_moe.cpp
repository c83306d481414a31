// SPDX-License-Identifier: MIT
// Mixture-of-experts on the CPU: routing, expert products that read only the chosen experts' weights (tokens
// grouped by expert, so each expert's rows are streamed once per batch), per-expert biases, and the weighted
// combination.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/host_buffer.h"

namespace ember::cpu_backend {

void CpuBackend::do_moe_route(const Tensor& logits, int k, const Tensor& ids, const Tensor& weights) {
    const int64_t n_experts = logits.cols;
    std::vector<int32_t> order(static_cast<size_t>(n_experts));
    std::vector<double> p(static_cast<size_t>(n_experts));
    for (int64_t t = 0; t < logits.rows; ++t) {
        const float* l = host_row(logits, t);
        const float max = *std::max_element(l, l + n_experts);
        double sum = 0.0;
        for (int64_t e = 0; e < n_experts; ++e) sum += (p[static_cast<size_t>(e)] = std::exp(double(l[e]) - max));
        for (double& x : p) x /= sum;
        for (int64_t e = 0; e < n_experts; ++e) order[static_cast<size_t>(e)] = static_cast<int32_t>(e);
        std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
            return p[static_cast<size_t>(a)] > p[static_cast<size_t>(b)] ||
                   (p[static_cast<size_t>(a)] == p[static_cast<size_t>(b)] && a < b);
        });
        double chosen = 0.0;
        for (int j = 0; j < k; ++j) chosen += p[static_cast<size_t>(order[static_cast<size_t>(j)])];
        chosen = std::max(chosen, 6.1035e-5);
        auto* id_row = reinterpret_cast<int32_t*>(host_data(ids) + static_cast<size_t>(t) * ids.row_stride);
        float* w_row = host_row(weights, t);
        for (int j = 0; j < k; ++j) {
            id_row[j] = order[static_cast<size_t>(j)];
            w_row[j] = static_cast<float>(p[static_cast<size_t>(order[static_cast<size_t>(j)])] / chosen);
        }
    }
}

void CpuBackend::do_matmul_experts(const Tensor& w, int64_t n_experts, const Tensor& x, const Tensor& ids,
                                   const Tensor& out) {
    const int64_t rows = w.rows / n_experts;
    const int64_t n_tokens = ids.rows;
    const int64_t k = ids.cols;

    // Slots (t, j) grouped by expert: expert_rows_ holds slot indices sorted by expert.
    expert_rows_.resize(static_cast<size_t>(n_tokens * k));
    for (int64_t s = 0; s < n_tokens * k; ++s) expert_rows_[static_cast<size_t>(s)] = s;
    auto expert_of = [&](int64_t slot) {
        const auto* row = reinterpret_cast<const int32_t*>(host_data(ids) + static_cast<size_t>(slot / k) * ids.row_stride);
        return row[slot % k];
    };
    for (int64_t s = 0; s < n_tokens * k; ++s) {
        const int32_t e = expert_of(s);
        if (e < 0 || e >= n_experts)
            throw Error("expert id " + std::to_string(e) + " is outside 0.." + std::to_string(n_experts - 1));
    }
    std::stable_sort(expert_rows_.begin(), expert_rows_.end(),
                     [&](int64_t a, int64_t b) { return expert_of(a) < expert_of(b); });

    const bool per_slot = x.rows == n_tokens * k && k > 1;
    const float* xs = host_f32(x);
    float* ys = host_f32(out);
    for (size_t first = 0; first < expert_rows_.size();) {
        const int32_t e = expert_of(expert_rows_[first]);
        size_t last = first;
        while (last < expert_rows_.size() && expert_of(expert_rows_[last]) == e) ++last;
        const int64_t count = static_cast<int64_t>(last - first);
        const cpu::WeightMatrix m{w.type, host_data(w) + static_cast<size_t>(e * rows) * w.row_stride, rows, w.cols,
                                  w.row_stride};
        auto input_row = [&](int64_t slot) { return xs + (per_slot ? slot : slot / k) * x.cols; };
        if (count == 1) {
            matmul_rows(m, input_row(expert_rows_[first]), 1, ys + expert_rows_[first] * rows);
        } else {
            gathered_x_.resize(static_cast<size_t>(count * x.cols));
            gathered_y_.resize(static_cast<size_t>(count * rows));
            for (int64_t i = 0; i < count; ++i)
                std::memcpy(gathered_x_.data() + i * x.cols, input_row(expert_rows_[first + static_cast<size_t>(i)]),
                            static_cast<size_t>(x.cols) * 4);
            matmul_rows(m, gathered_x_.data(), count, gathered_y_.data());
            for (int64_t i = 0; i < count; ++i)
                std::memcpy(ys + expert_rows_[first + static_cast<size_t>(i)] * rows, gathered_y_.data() + i * rows,
                            static_cast<size_t>(rows) * 4);
        }
        counters_.expert_weight_bytes += static_cast<uint64_t>(rows) * w.row_stride;
        first = last;
    }
}

void CpuBackend::do_add_expert_bias(const Tensor& bias, const Tensor& ids, const Tensor& out) {
    const int64_t k = ids.cols;
    const int64_t n_experts = bias.rows;
    for (int64_t t = 0; t < ids.rows; ++t) {
        const auto* row = reinterpret_cast<const int32_t*>(host_data(ids) + static_cast<size_t>(t) * ids.row_stride);
        for (int64_t j = 0; j < k; ++j)
            if (row[j] < 0 || row[j] >= n_experts)
                throw Error("expert id " + std::to_string(row[j]) + " is outside 0.." + std::to_string(n_experts - 1));
    }
    for_rows(out.rows, out.cols, [&](int64_t begin, int64_t end) {
        for (int64_t s = begin; s < end; ++s) {
            const auto* row =
                reinterpret_cast<const int32_t*>(host_data(ids) + static_cast<size_t>(s / k) * ids.row_stride);
            const float* b = host_row(bias, row[s % k]);
            float* o = host_row(out, s);
            for (int64_t i = 0; i < out.cols; ++i) o[i] += b[i];
        }
    });
}

void CpuBackend::do_moe_combine(const Tensor& y, const Tensor& weights, const Tensor& out) {
    const int64_t k = weights.cols;
    for_rows(out.rows, out.cols * k, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            float* o = host_row(out, t);
            const float* w = host_row(weights, t);
            for (int64_t i = 0; i < out.cols; ++i) o[i] = 0.0f;
            for (int64_t j = 0; j < k; ++j) {
                const float* src = host_row(y, t * k + j);
                for (int64_t i = 0; i < out.cols; ++i) o[i] += w[j] * src[i];
            }
        }
    });
}

}  // namespace ember::cpu_backend
