// SPDX-License-Identifier: MIT
// CPU compute kernels: dot products of quantized weight rows with quantized activations, matrix x vector and
// matrix x matrix over a persistent thread pool. Every weight type has a scalar kernel, the reference, and an
// AVX2/FMA/F16C kernel chosen at run time; both compute the same integer block sums, so they agree to float
// rounding (bit for bit for the K-quants).
//
// Activations: Q8_0 for the 32-weight types (legacy, MXFP4, ROCmFP4 family), Q8_K for the K-quants, F32 for
// float weights. The kernels never allocate, never throw in the hot loop, and never read outside the rows given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>

#include "ember/gguf.h"

namespace ember::cpu {

enum class Isa { scalar, avx2 };

Isa best_isa();        // runtime detection (cpuid: AVX2 + FMA + F16C, and OS support for the AVX state)
bool isa_supported(Isa isa);
// Whether the AVX2 tier's block kernels may take their AVX-VNNI build: the CPU has AVX-VNNI and
// EMBER_CPU_NO_AVXVNNI is not 1 (which keeps the plain AVX2 ones, for comparisons).
bool avxvnni_wanted();
const char* isa_name(Isa isa);

class ThreadPool {  // persistent worker threads; the caller thread participates
public:
    explicit ThreadPool(int n_threads);  // total threads incl. the caller; >= 1
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const;
    // Calls fn(begin, end) on contiguous chunks covering [0, n), one per thread at most; returns when all are
    // done. No heap allocation per call. If fn throws, the first exception is rethrown here after every chunk
    // has finished. One caller at a time; fn must not call parallel_for on the same pool.
    template <typename F>
    void parallel_for(int64_t n, F&& fn) {
        using Fn = std::remove_reference_t<F>;
        run(n, [](void* ctx, int64_t begin, int64_t end) { (*static_cast<Fn*>(ctx))(begin, end); },
            const_cast<void*>(static_cast<const void*>(std::addressof(fn))));
    }

private:
    using Task = void (*)(void* ctx, int64_t begin, int64_t end);
    void run(int64_t n, Task task, void* ctx);

    struct State;
    std::unique_ptr<State> state_;
};

gguf::TensorType activation_type(gguf::TensorType weight);  // Q8_0, Q8_K, or F32 for float weights
size_t activation_bytes(gguf::TensorType weight, int64_t cols, int64_t n_tokens = 1);
bool has_kernel(gguf::TensorType weight);  // a dot-product kernel exists for this weight type

struct WeightMatrix {  // row-major quantized rows, as in GGUF (row = shape[0] weights)
    gguf::TensorType type;
    const void* data;
    int64_t rows;
    int64_t cols;
    size_t row_stride;  // bytes between rows
};

// y[r] = dot(W[r, :], x) for every row; x has w.cols floats. scratch: activation_bytes(w.type, w.cols) bytes.
void matvec(Isa isa, const WeightMatrix& w, const float* x, float* y, ThreadPool& pool, std::span<std::byte> scratch);
// y[t * w.rows + r] = dot(W[r, :], x[t * w.cols ...]) for t < n_tokens; activations quantized once. Weight rows
// are read once per tile of tokens.
void matmul(Isa isa, const WeightMatrix& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool,
            std::span<std::byte> scratch);  // scratch: activation_bytes(w.type, w.cols, n_tokens)

// Single dot products (tests, odd shapes): weight row against an already-quantized activation row.
void quantize_activations(gguf::TensorType weight, const float* x, void* out, int64_t cols);
float dot(Isa isa, gguf::TensorType weight, const void* w_row, const void* act_row, int64_t cols);

// Attention's inner loops over cache rows of a float type (F32, F16, BF16) for several heads at once, so each
// cache row is read once: for r < n_rows (row r at rows + r * row_stride bytes) and i < n:
//   dot_float_rows:        out[r * n + i] = dot(row r, act + i * act_stride)                 (n <= 4)
//   accumulate_float_rows: acc[i * acc_stride + c] += weights[r * n + i] * row r [c]
// act and acc rows are F32; their strides count floats.
void dot_float_rows(Isa isa, gguf::TensorType type, const std::byte* rows, size_t row_stride, int64_t n_rows,
                    const float* act, int64_t act_stride, int n, int64_t cols, float* out);
void accumulate_float_rows(Isa isa, gguf::TensorType type, const std::byte* rows, size_t row_stride, int64_t n_rows,
                           const float* weights, int n, float* acc, int64_t acc_stride, int64_t cols);

// Kernel calls served by each ISA's kernel table on the calling thread (one per dot() and per matrix row tile
// run on this thread): lets tests prove which implementation ran.
struct KernelCounts {
    uint64_t scalar = 0;
    uint64_t avx2 = 0;
};
KernelCounts kernel_counts();

}  // namespace ember::cpu
