// SPDX-License-Identifier: MIT
// matvec / matmul / dot: pick the kernel of the requested ISA, quantize the activations once, split the weight
// rows across the pool. matmul walks tokens in blocks that stay in cache and, inside a block, runs each weight
// row against tiles of kMaxTile tokens, so a row is read once per token block and decoded once per tile.
#include <algorithm>
#include <string>

#include "cpu/cpu_kernels.h"
#include "cpu/dot_kernels.h"
#include "ember/error.h"
#include "quant/quant.h"

namespace ember::cpu {

namespace {

using gguf::TensorType;

constexpr int64_t kTokenBlock = 64;

thread_local KernelCounts t_counts;

std::string type_name(TensorType t) {
    const gguf::TypeTraits* traits = gguf::find_type(static_cast<uint32_t>(t));
    return traits ? std::string(traits->name) : "type id " + std::to_string(static_cast<uint32_t>(t));
}

const detail::Kernel* find_kernel(Isa isa, TensorType type) {
    return isa == Isa::avx2 ? detail::avx2_kernel(type) : detail::scalar_kernel(type);
}

const detail::Kernel& kernel_for(Isa isa, TensorType type) {
    static const bool avx2_ok = isa_supported(Isa::avx2);
    if (isa == Isa::avx2 && !avx2_ok)
        throw Error("the avx2 kernels need AVX2, FMA and F16C, which this CPU does not have");
    const detail::Kernel* k = find_kernel(isa, type);
    if (!k) throw Error("no CPU kernel for weight type " + type_name(type));
    return *k;
}

void count(const detail::Kernel& k, uint64_t calls) {
    (k.isa == Isa::avx2 ? t_counts.avx2 : t_counts.scalar) += calls;
}

void check_matrix(const WeightMatrix& w) {
    if (w.rows < 0 || w.cols < 0) throw Error("weight matrix with negative shape");
    const uint64_t row = gguf::row_bytes(w.type, w.cols);
    if (w.rows > 1 && w.row_stride < row)
        throw Error("weight row stride " + std::to_string(w.row_stride) + " is below the row size " + std::to_string(row));
}

// An activation row for `weight`: as activation_type(weight), by the AVX2 quantizer where the ISA has it (the same
// bytes), else the reference; Q8_0 rows then carry their blocks' scales, and their sums where the weight type has a
// block minimum (detail::write_block_extras).
void quantize_row(Isa isa, TensorType weight, const float* x, std::byte* out, int64_t cols) {
    const TensorType at = activation_type(weight);
    if (isa == Isa::avx2 && at == TensorType::Q8_0 && cols % 32 == 0)
        detail::avx2_quantize_q8_0(x, out, cols);
    else
        quant::quantize_row(at, x, out, cols);
    if (at == TensorType::Q8_0) detail::write_block_extras(out, cols, detail::carries_block_sums(weight));
}

}  // namespace

namespace detail {

size_t activation_row_bytes(TensorType weight, int64_t cols) {
    const TensorType at = activation_type(weight);
    const size_t row = static_cast<size_t>(gguf::row_bytes(at, cols)), blocks = static_cast<size_t>(cols / 32);
    if (at != TensorType::Q8_0) return row;
    return row + 4 * blocks * (carries_block_sums(weight) ? 2 : 1);
}

void write_block_extras(std::byte* q8_0_row, int64_t cols, bool with_sums) {
    const auto* blocks = reinterpret_cast<const quant::block::Q8_0*>(q8_0_row);
    const int64_t nb = cols / 32;
    std::byte* extras = q8_0_row + static_cast<size_t>(nb) * sizeof(quant::block::Q8_0);
    for (int64_t k = 0; k < nb; ++k) {
        const float d = quant::load_fp16(blocks[k].d);
        std::memcpy(extras + 4 * k, &d, sizeof d);
        if (!with_sums) continue;
        int codes = 0;
        for (int8_t q : blocks[k].qs) codes += q;
        const float sum = static_cast<float>(codes) * d;
        std::memcpy(extras + 4 * (nb + k), &sum, sizeof sum);
    }
}

}  // namespace detail

bool has_kernel(TensorType weight) { return detail::scalar_kernel(weight) != nullptr; }

TensorType activation_type(TensorType weight) {
    if (!has_kernel(weight)) throw Error("no CPU kernel for weight type " + type_name(weight));
    if (weight == TensorType::F32 || weight == TensorType::F16 || weight == TensorType::BF16) return TensorType::F32;
    return gguf::traits(weight).block_size == quant::block::qk_k ? TensorType::Q8_K : TensorType::Q8_0;
}

size_t activation_bytes(TensorType weight, int64_t cols, int64_t n_tokens) {
    return detail::activation_row_bytes(weight, cols) * static_cast<size_t>(n_tokens);
}

void quantize_activations(TensorType weight, const float* x, void* out, int64_t cols) {
    if (activation_type(weight) == TensorType::F32) std::memcpy(out, x, static_cast<size_t>(cols) * sizeof(float));
    else
        quantize_row(isa_supported(Isa::avx2) ? Isa::avx2 : Isa::scalar, weight, x, static_cast<std::byte*>(out),
                     cols);
}

float dot(Isa isa, TensorType weight, const void* w_row, const void* act_row, int64_t cols) {
    const detail::Kernel& k = kernel_for(isa, weight);
    gguf::row_bytes(weight, cols);  // throws unless cols is a multiple of the block size
    float out = 0.0f;
    k.tile(w_row, static_cast<const std::byte*>(act_row), 0, 1, cols, &out);
    count(k, 1);
    return out;
}

void dot_float_rows(Isa isa, TensorType type, const std::byte* rows, size_t row_stride, int64_t n_rows,
                    const float* act, int64_t act_stride, int n, int64_t cols, float* out) {
    if (activation_type(type) != TensorType::F32 || n < 1 || n > detail::kMaxTile)
        throw Error("dot_float_rows: " + type_name(type) + " rows, " + std::to_string(n) + " activations");
    const detail::Kernel& k = kernel_for(isa, type);
    const auto* a = reinterpret_cast<const std::byte*>(act);
    for (int64_t r = 0; r < n_rows; ++r)
        k.tile(rows + r * row_stride, a, static_cast<size_t>(act_stride) * sizeof(float), n, cols, out + r * n);
    count(k, static_cast<uint64_t>(n_rows));
}

void accumulate_float_rows(Isa isa, TensorType type, const std::byte* rows, size_t row_stride, int64_t n_rows,
                           const float* weights, int n, float* acc, int64_t acc_stride, int64_t cols) {
    const detail::AccumulateFn fn = isa == Isa::avx2 ? detail::avx2_accumulate : detail::scalar_accumulate;
    if (isa == Isa::avx2) kernel_for(isa, type);  // the same AVX2 check as every kernel
    for (int64_t r = 0; r < n_rows; ++r)
        if (!fn(type, rows + r * row_stride, weights + r * n, n, acc, acc_stride, cols))
            throw Error("accumulate_float_rows: no kernel for " + type_name(type));
}

void matmul(Isa isa, const WeightMatrix& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool,
            std::span<std::byte> scratch) {
    const detail::Kernel& k = kernel_for(isa, w.type);
    check_matrix(w);
    if (n_tokens <= 0 || w.rows == 0) return;
    const TensorType at = activation_type(w.type);

    const std::byte* act;
    size_t act_stride;
    if (at == TensorType::F32) {
        act = reinterpret_cast<const std::byte*>(x);
        act_stride = static_cast<size_t>(w.cols) * sizeof(float);
    } else {
        act_stride = detail::activation_row_bytes(w.type, w.cols);
        const size_t need = act_stride * static_cast<size_t>(n_tokens);
        if (scratch.size() < need)
            throw Error("activation scratch of " + std::to_string(scratch.size()) + " bytes, need " + std::to_string(need));
        std::byte* out = scratch.data();
        const int64_t cols = w.cols;
        pool.parallel_for(n_tokens, [&](int64_t t0, int64_t t1) {
            for (int64_t t = t0; t < t1; ++t) quantize_row(isa, w.type, x + t * cols, out + t * act_stride, cols);
        });
        act = out;
    }

    pool.parallel_for(w.rows, [&](int64_t r0, int64_t r1) {
        uint64_t calls = 0;
        float out[detail::kMaxTile];
        for (int64_t b0 = 0; b0 < n_tokens; b0 += kTokenBlock) {
            const int64_t b1 = std::min(n_tokens, b0 + kTokenBlock);
            for (int64_t r = r0; r < r1; ++r) {
                const void* row = static_cast<const std::byte*>(w.data) + r * static_cast<int64_t>(w.row_stride);
                for (int64_t t = b0; t < b1; t += detail::kMaxTile) {
                    const int n = static_cast<int>(std::min<int64_t>(detail::kMaxTile, b1 - t));
                    k.tile(row, act + t * static_cast<int64_t>(act_stride), act_stride, n, w.cols, out);
                    for (int i = 0; i < n; ++i) y[(t + i) * w.rows + r] = out[i];
                    ++calls;
                }
            }
        }
        count(k, calls);
    });
}

void matvec(Isa isa, const WeightMatrix& w, const float* x, float* y, ThreadPool& pool, std::span<std::byte> scratch) {
    matmul(isa, w, x, 1, y, pool, scratch);
}

KernelCounts kernel_counts() { return t_counts; }

}  // namespace ember::cpu
