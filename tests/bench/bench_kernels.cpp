// SPDX-License-Identifier: MIT
// ember-bench-kernels: GB/s of weight data consumed by matrix x vector for every weight type on 1 and 2 threads,
// next to the machine's memory bandwidth measured in the same run (copy and read of a buffer of the same size),
// so the ratio to the roofline is visible. Also prefill (matmul over 64 tokens) against 64 separate matvecs.
//
// Every matrix is 128 MiB (4096 columns), four times the size of a large L3, so the figures are DRAM figures.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "cpu/cpu_kernels.h"
#include "quant/quant.h"

namespace {

using ember::gguf::TensorType;
namespace cpu = ember::cpu;

constexpr int64_t kCols = 4096;
constexpr size_t kMatrixBytes = size_t{128} << 20;

const TensorType kTypes[] = {
    TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q8_0,  TensorType::Q4_0,
    TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::MXFP4, TensorType::Q2_K,
    TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K,  TensorType::Q4_0_ROCMFP4,
    TensorType::Q4_0_ROCMFP4_FAST, TensorType::Q6_0_ROCMFPX, TensorType::Q8_0_ROCMFPX, TensorType::Q3_0_ROCMFPX};

// One matrix at a time: 64 quantized Gaussian rows repeated to 128 MiB.
struct Matrix {
    TensorType type = TensorType::F32;
    std::vector<uint8_t> data;
    int64_t rows = 0;
    size_t row_bytes = 0;
};

const Matrix& matrix_of(TensorType type) {
    static Matrix m;
    if (m.type == type && !m.data.empty()) return m;
    m = Matrix{};
    m.type = type;
    m.row_bytes = ember::gguf::row_bytes(type, kCols);
    m.rows = static_cast<int64_t>(kMatrixBytes / m.row_bytes);
    m.data.resize(m.row_bytes * static_cast<size_t>(m.rows));
    std::mt19937 rng(42);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> x(kCols);
    const int64_t distinct = 64;
    for (int64_t r = 0; r < distinct; ++r) {
        for (float& v : x) v = normal(rng);
        ember::quant::quantize_row(type, x.data(), m.data.data() + r * m.row_bytes, kCols);
    }
    for (int64_t r = distinct; r < m.rows; ++r)
        std::memcpy(m.data.data() + r * m.row_bytes, m.data.data() + (r % distinct) * m.row_bytes, m.row_bytes);
    return m;
}

std::vector<float> activations(int64_t n) {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = normal(rng);
    return x;
}

void BM_copy(benchmark::State& state) {
    std::vector<uint8_t> src(kMatrixBytes, 1), dst(kMatrixBytes, 0);
    for (auto _ : state) {
        std::memcpy(dst.data(), src.data(), kMatrixBytes);
        benchmark::DoNotOptimize(dst.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kMatrixBytes));
    state.SetLabel("bytes copied (each read once, written once)");
}

// Reading alone (what matvec does with the weights): a sum of 64-bit words over the buffer on `threads` threads.
void BM_read(benchmark::State& state) {
    const int threads = static_cast<int>(state.range(0));
    std::vector<uint64_t> src(kMatrixBytes / 8, 3);
    cpu::ThreadPool pool(threads);
    std::vector<uint64_t> partial(static_cast<size_t>(threads) * 8);
    for (auto _ : state) {
        pool.parallel_for(threads, [&](int64_t b, int64_t e) {
            for (int64_t t = b; t < e; ++t) {
                const size_t begin = src.size() * static_cast<size_t>(t) / threads;
                const size_t end = src.size() * static_cast<size_t>(t + 1) / threads;
                uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                for (size_t i = begin; i + 4 <= end; i += 4) {
                    s0 += src[i];
                    s1 += src[i + 1];
                    s2 += src[i + 2];
                    s3 += src[i + 3];
                }
                partial[static_cast<size_t>(t) * 8] = s0 + s1 + s2 + s3;
            }
        });
        benchmark::DoNotOptimize(partial.data());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kMatrixBytes));
}

void BM_matvec(benchmark::State& state, TensorType type, cpu::Isa isa) {
    const int threads = static_cast<int>(state.range(0));
    const Matrix& m = matrix_of(type);
    const cpu::WeightMatrix w{type, m.data.data(), m.rows, kCols, m.row_bytes};
    const std::vector<float> x = activations(kCols);
    std::vector<float> y(static_cast<size_t>(m.rows));
    std::vector<std::byte> scratch(cpu::activation_bytes(type, kCols));
    cpu::ThreadPool pool(threads);
    for (auto _ : state) {
        cpu::matvec(isa, w, x.data(), y.data(), pool, scratch);
        benchmark::DoNotOptimize(y.data());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(m.data.size()));
}

// Prefill: 64 tokens through one matmul, against the same 64 tokens as 64 matvecs. items = tokens.
void BM_prefill(benchmark::State& state, TensorType type, bool as_matmul) {
    constexpr int64_t kTokens = 64;
    const int threads = static_cast<int>(state.range(0));
    const Matrix& m = matrix_of(type);
    const int64_t rows = std::min<int64_t>(m.rows, 4096);  // a 4096 x 4096 layer
    const cpu::WeightMatrix w{type, m.data.data(), rows, kCols, m.row_bytes};
    const std::vector<float> x = activations(kCols * kTokens);
    std::vector<float> y(static_cast<size_t>(rows * kTokens));
    std::vector<std::byte> scratch(cpu::activation_bytes(type, kCols, kTokens));
    cpu::ThreadPool pool(threads);
    const cpu::Isa isa = cpu::best_isa();
    for (auto _ : state) {
        if (as_matmul) {
            cpu::matmul(isa, w, x.data(), kTokens, y.data(), pool, scratch);
        } else {
            for (int64_t t = 0; t < kTokens; ++t)
                cpu::matvec(isa, w, x.data() + t * kCols, y.data() + t * rows, pool, scratch);
        }
        benchmark::DoNotOptimize(y.data());
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kTokens);
}

void register_benchmarks() {
    benchmark::RegisterBenchmark("copy", BM_copy)->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark("read", BM_read)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();
    const cpu::Isa isa = cpu::best_isa();
    for (TensorType t : kTypes) {
        const std::string name = "matvec/" + std::string(ember::gguf::traits(t).name) + "/" + cpu::isa_name(isa);
        benchmark::RegisterBenchmark(name.c_str(), BM_matvec, t, isa)
            ->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();
    }
    if (isa != cpu::Isa::scalar)
        for (TensorType t : {TensorType::Q4_0_ROCMFP4, TensorType::Q4_0_ROCMFP4_FAST, TensorType::Q4_K}) {
            const std::string name = "matvec/" + std::string(ember::gguf::traits(t).name) + "/scalar";
            benchmark::RegisterBenchmark(name.c_str(), BM_matvec, t, cpu::Isa::scalar)
                ->Arg(1)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();
        }
    for (TensorType t : {TensorType::Q4_0_ROCMFP4, TensorType::Q4_0_ROCMFP4_FAST, TensorType::Q4_K, TensorType::Q8_0,
                         TensorType::F16}) {
        const std::string base = "prefill64/" + std::string(ember::gguf::traits(t).name);
        benchmark::RegisterBenchmark((base + "/matmul").c_str(), BM_prefill, t, true)
            ->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();
        benchmark::RegisterBenchmark((base + "/64_matvecs").c_str(), BM_prefill, t, false)
            ->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();
    }
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::AddCustomContext("isa", cpu::isa_name(cpu::best_isa()));
    benchmark::AddCustomContext("matrix", "128 MiB of weights, 4096 columns");
    register_benchmarks();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
