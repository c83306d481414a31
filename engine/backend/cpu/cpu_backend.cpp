// SPDX-License-Identifier: MIT
// The CPU backend's construction, buffers, mapped weights and thread pool (its operations are in cpu_*.cpp).
#include "backend/cpu/cpu_backend.h"

#include <cstring>
#include <thread>

#include "backend/cpu/host_buffer.h"
#include "quant/quant.h"

namespace ember::cpu_backend {

namespace {

int thread_count(const CpuBackendOptions& options) {
    if (options.threads > 0) return options.threads;
    const unsigned hw = std::thread::hardware_concurrency();
    return hw ? static_cast<int>(hw) : 1;
}

}  // namespace

CpuBackend::CpuBackend(const CpuBackendOptions& options) : isa_(cpu::best_isa()), pool_(thread_count(options)) {}

std::string CpuBackend::name() const {
    // The block kernels' instruction set as they run it: AVX2, with AVX-VNNI's dot products where they take them.
    const char* isa = isa_ != cpu::Isa::avx2 ? "scalar" : cpu::avxvnni_wanted() ? "avx2, avx-vnni" : "avx2";
    return std::string("cpu (") + isa + ", " + std::to_string(pool_.size()) + " threads)";
}

std::unique_ptr<Buffer> CpuBackend::allocate(size_t bytes) { return std::make_unique<HostBuffer>(bytes); }

std::unique_ptr<Buffer> CpuBackend::map_weights(std::span<const std::byte> bytes) {
    return std::make_unique<BorrowedBuffer>(bytes);
}

void CpuBackend::do_write(const Tensor& dst, std::span<const std::byte> src) {
    std::memcpy(host_data(dst), src.data(), src.size());
}

void CpuBackend::do_read(const Tensor& src, std::span<std::byte> dst) {
    std::memcpy(dst.data(), host_data(src), dst.size());
}

void CpuBackend::do_get_rows(const Tensor& table, std::span<const int32_t> ids, const Tensor& out) {
    for (size_t i = 0; i < ids.size(); ++i) {
        quant::dequantize_row(table.type, host_data(table) + static_cast<size_t>(ids[i]) * table.row_stride,
                              host_f32(out.row_range(static_cast<int64_t>(i), 1)), table.cols);
    }
}

void CpuBackend::do_matmul(const Tensor& w, const Tensor& x, const Tensor& out, const Tensor* bias) {
    matmul_rows({w.type, host_data(w), w.rows, w.cols, w.row_stride}, host_f32(x), x.rows, host_f32(out));
    if (bias) add(out, *bias, out);
}

void CpuBackend::matmul_rows(const cpu::WeightMatrix& w, const float* x, int64_t n, float* y) {
    const size_t need = cpu::activation_bytes(w.type, w.cols, n);
    if (scratch_.size() < need) scratch_.resize(need);
    if (n == 1)
        cpu::matvec(isa_, w, x, y, pool_, scratch_);
    else
        cpu::matmul(isa_, w, x, n, y, pool_, scratch_);
    counters_.weight_bytes += static_cast<uint64_t>(w.rows) * w.row_stride;
}

void CpuBackend::do_convert(const Tensor& x, const Tensor& out) {
    if (x.type == out.type) {  // a copy (snapshots, checkpoints)
        const size_t bytes = gguf::row_bytes(x.type, x.cols);
        if (x.contiguous() && out.contiguous()) {
            std::memcpy(host_data(out), host_data(x), bytes * static_cast<size_t>(x.rows));
            return;
        }
        for (int64_t r = 0; r < x.rows; ++r)
            std::memcpy(host_data(out) + static_cast<size_t>(r) * out.row_stride,
                        host_data(x) + static_cast<size_t>(r) * x.row_stride, bytes);
        return;
    }
    std::vector<float> row(static_cast<size_t>(x.cols));
    for (int64_t r = 0; r < x.rows; ++r) {
        const std::byte* src = host_data(x) + static_cast<size_t>(r) * x.row_stride;
        std::byte* dst = host_data(out) + static_cast<size_t>(r) * out.row_stride;
        quant::dequantize_row(x.type, src, row.data(), x.cols);
        quant::quantize_row(out.type, row.data(), dst, out.cols);
    }
}

}  // namespace ember::cpu_backend

namespace ember {

std::unique_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options) {
    return std::make_unique<cpu_backend::CpuBackend>(options);
}

}  // namespace ember
