// SPDX-License-Identifier: MIT
// The CPU backend: weights used in place from the file mapping, kernels from kernels/cpu on its own thread pool.
#pragma once

#include <vector>

#include "cpu/cpu_kernels.h"
#include "ember/backend.h"

namespace ember::cpu_backend {

class CpuBackend final : public Backend {
public:
    explicit CpuBackend(const CpuBackendOptions& options);

    std::string name() const override;
    std::unique_ptr<Buffer> allocate(size_t bytes) override;
    std::unique_ptr<Buffer> map_weights(std::span<const std::byte> bytes) override;
    void write(const Tensor& dst, std::span<const std::byte> src) override;
    void read(const Tensor& src, std::span<std::byte> dst) override;
    void synchronize() override {}

    void get_rows(const Tensor& table, std::span<const int32_t> ids, const Tensor& out) override;
    void matmul(const Tensor& w, const Tensor& x, const Tensor& out, const Tensor* bias) override;
    void rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) override;
    void layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps, const Tensor& out) override;
    void add(const Tensor& a, const Tensor& b, const Tensor& out) override;
    void mul(const Tensor& a, const Tensor& b, const Tensor& out) override;
    void scale(const Tensor& x, float s, const Tensor& out) override;
    void gated_activation(Activation act, const Tensor& gate, const Tensor& up, const Tensor& out) override;
    void rope(const Tensor& x, int head_dim, std::span<const int32_t> positions, const RopeParams& p,
              const Tensor* freq_factors) override;
    void store_kv(const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,
                  std::span<const int32_t> positions) override;
    void attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache, int64_t n_kv,
                   std::span<const int32_t> positions, const AttentionParams& p, const Tensor& out) override;
    void softmax(const Tensor& x) override;
    void convert(const Tensor& x, const Tensor& out) override;

    void unary(UnaryOp op, const Tensor& x, const Tensor& out) override;
    void l2_norm(const Tensor& x, int head_dim, float eps, const Tensor& out) override;
    void rms_norm_gated(const Tensor& x, const Tensor& weight, const Tensor& z, float eps, const Tensor& out) override;
    void conv1d_causal(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out) override;
    void delta_rule(const DeltaRuleArgs& args) override;
    void moe_route(const Tensor& logits, int k, const Tensor& ids, const Tensor& weights) override;
    void matmul_experts(const Tensor& w, int64_t n_experts, const Tensor& x, const Tensor& ids,
                        const Tensor& out) override;
    void add_expert_bias(const Tensor& bias, const Tensor& ids, const Tensor& out) override;
    void moe_combine(const Tensor& y, const Tensor& weights, const Tensor& out) override;
    BackendCounters counters() const override { return counters_; }

    cpu::ThreadPool& pool() { return pool_; }

private:
    void attention_float_cache(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache, int64_t n_kv,
                               std::span<const int32_t> positions, const AttentionParams& p, const Tensor& out);
    // Runs fn(begin, end) over [0, n) on the pool, or inline when the work is too small to share.
    template <typename F>
    void for_rows(int64_t n, int64_t work_per_item, F&& fn) {
        constexpr int64_t min_work = 32 * 1024;  // below this, waking the pool costs more than it saves
        if (pool_.size() == 1 || n < 2 || n * work_per_item < min_work) {
            fn(int64_t{0}, n);
            return;
        }
        pool_.parallel_for(n, fn);
    }

    // y[r, :] = W x[r, :] for contiguous x and y rows (the quantized-activation scratch is shared).
    void matmul_rows(const cpu::WeightMatrix& w, const float* x, int64_t n, float* y);

    cpu::Isa isa_;
    cpu::ThreadPool pool_;
    std::vector<std::byte> scratch_;  // quantized activations; grows to the largest batch, then stays
    // Expert grouping scratch, reused across calls.
    std::vector<int64_t> expert_rows_;
    std::vector<float> gathered_x_;
    std::vector<float> gathered_y_;
    BackendCounters counters_;
};

}  // namespace ember::cpu_backend
