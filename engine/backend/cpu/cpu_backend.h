// SPDX-License-Identifier: MIT
// The CPU backend: weights used in place from the file mapping, kernels from kernels/cpu on its own thread pool.
#pragma once

#include <vector>

#include "backend/backend_operations.h"
#include "cpu/cpu_kernels.h"
#include "backend/backend.h"

namespace ember::cpu_backend {

class CpuBackend final : public Backend {
public:
    explicit CpuBackend(const CpuBackendOptions& options);

    std::string name() const override;
    std::unique_ptr<Buffer> allocate(size_t bytes) override;
    std::unique_ptr<Buffer> map_weights(std::span<const std::byte> bytes) override;
    void synchronize() override {}

    BackendCounters counters() const override { return counters_; }

    cpu::ThreadPool& pool() { return pool_; }

protected:
    // The operations, called by Backend's checked entry points (backend/backend.h).
    EMBER_BACKEND_OPERATION_OVERRIDES

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
