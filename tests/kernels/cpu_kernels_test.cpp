// SPDX-License-Identifier: MIT
// The CPU kernels: every AVX2 kernel against its scalar reference on 4096-long rows and many seeds, proof that
// both ran, matvec/matmul against dequantize + fp64, 1 and 2 threads, and the spec's ROCmFP4 dot check (§8.4).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/error_message.h"
#include "cpu/cpu_kernels.h"
#include "kernels/weight_rows.h"
#include "quant/type_printer.h"

namespace {

using ember::test::error_of;

using ember::gguf::TensorType;
using ember::cpu::Isa;
namespace cpu = ember::cpu;
namespace q = ember::quant;

std::string name_of(TensorType t) { return std::string(ember::gguf::traits(t).name); }

std::vector<std::byte> activations(TensorType weight, const std::vector<float>& x) {
    const auto cols = static_cast<int64_t>(x.size());
    std::vector<std::byte> act(cpu::activation_bytes(weight, cols));
    cpu::quantize_activations(weight, x.data(), act.data(), cols);
    return act;
}

std::vector<float> dequantized(TensorType t, const void* data, int64_t n) {
    std::vector<float> out(static_cast<size_t>(n));
    q::dequantize_row(t, data, out.data(), n);
    return out;
}

// sum |w_i * a_i| over the dequantized row and activations: the scale the dot's rounding error is measured on.
double magnitude(TensorType weight, const std::vector<uint8_t>& w, const std::vector<std::byte>& act, int64_t cols) {
    const std::vector<float> wf = dequantized(weight, w.data(), cols);
    const std::vector<float> af = dequantized(cpu::activation_type(weight), act.data(), cols);
    double m = 0;
    for (int64_t i = 0; i < cols; ++i) m += std::fabs(static_cast<double>(wf[i]) * af[i]);
    return m;
}

class PerType : public testing::TestWithParam<TensorType> {
protected:
    void SetUp() override {
        if (!cpu::isa_supported(Isa::avx2)) GTEST_SKIP() << "this CPU has no AVX2/FMA/F16C";
    }
};

TEST_P(PerType, Avx2AgreesWithScalarOn4096LongRows) {
    const TensorType t = GetParam();
    constexpr int64_t cols = 4096;
    std::mt19937 rng(static_cast<unsigned>(t) * 977u + 1);
    double worst = 0;
    for (int seed = 0; seed < 24; ++seed) {
        const std::vector<uint8_t> w = seed % 2 ? ember::test::random_row(t, cols, rng)
                                                : ember::test::quantized_row(t, ember::test::gaussian(rng, cols));
        std::vector<float> x = ember::test::gaussian(rng, cols, seed % 3 == 0 ? 30.0f : 1.0f);
        if (seed % 4 == 1)
            for (float& v : x) v = std::fabs(v);  // no cancellation: the dot is large
        const std::vector<std::byte> act = activations(t, x);
        const float scalar = cpu::dot(Isa::scalar, t, w.data(), act.data(), cols);
        const float simd = cpu::dot(Isa::avx2, t, w.data(), act.data(), cols);
        const double m = magnitude(t, w, act, cols);
        const double rel = m > 0 ? std::fabs(static_cast<double>(simd) - scalar) / m : std::fabs(simd - scalar);
        worst = std::max(worst, rel);
        ASSERT_LT(rel, 1e-5) << name_of(t) << " seed " << seed << ": scalar " << scalar << ", avx2 " << simd;
        ASSERT_TRUE(std::isfinite(simd));
    }
    std::printf("%s: worst relative difference %.3g\n", name_of(t).c_str(), worst);
}

TEST(Kernels, KQuantKernelsAgreeBitForBit) {
    if (!cpu::isa_supported(Isa::avx2)) GTEST_SKIP() << "this CPU has no AVX2/FMA/F16C";
    std::mt19937 rng(5);
    for (TensorType t : {TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}) {
        for (int seed = 0; seed < 8; ++seed) {
            const std::vector<uint8_t> w = ember::test::random_row(t, 4096, rng);
            const std::vector<std::byte> act = activations(t, ember::test::gaussian(rng, 4096));
            EXPECT_EQ(cpu::dot(Isa::scalar, t, w.data(), act.data(), 4096),
                      cpu::dot(Isa::avx2, t, w.data(), act.data(), 4096))
                << name_of(t) << " seed " << seed;
        }
    }
}

// y = W x for 37 rows (not a multiple of the thread count), against fp64 sums of the dequantized weights times
// (a) the dequantized activations: only the kernel's own rounding is left, and (b) the float x: the activation
// quantization error too. Tokens: 1, 5, and 70 (past one token block). 1 and 2 threads, both ISAs.
TEST_P(PerType, MatvecAndMatmulMatchDequantizedReference) {
    const TensorType t = GetParam();
    constexpr int64_t rows = 37, cols = 512;
    std::mt19937 rng(11);
    const size_t row_bytes = ember::gguf::row_bytes(t, cols);
    const size_t stride = row_bytes + 3;  // rows not packed back to back, and (mostly) not aligned
    std::vector<uint8_t> weights(stride * rows);
    std::vector<std::vector<float>> wf(rows);
    for (int64_t r = 0; r < rows; ++r) {
        const std::vector<uint8_t> row = r % 2 ? ember::test::random_row(t, cols, rng)
                                               : ember::test::quantized_row(t, ember::test::gaussian(rng, cols));
        std::memcpy(weights.data() + r * stride, row.data(), row_bytes);
        wf[r] = dequantized(t, row.data(), cols);
    }
    const cpu::WeightMatrix w{t, weights.data(), rows, cols, stride};
    for (int64_t n_tokens : {1, 5, 70}) {
        const std::vector<float> x = ember::test::gaussian(rng, cols * n_tokens);
        std::vector<std::byte> scratch(cpu::activation_bytes(t, cols, n_tokens));
        for (int threads : {1, 2}) {
            cpu::ThreadPool pool(threads);
            for (Isa isa : {Isa::scalar, Isa::avx2}) {
                std::vector<float> y(static_cast<size_t>(rows * n_tokens), NAN);
                if (n_tokens == 1) cpu::matvec(isa, w, x.data(), y.data(), pool, scratch);
                else cpu::matmul(isa, w, x.data(), n_tokens, y.data(), pool, scratch);
                for (int64_t tok = 0; tok < n_tokens; ++tok) {
                    const std::vector<float> xt(x.begin() + tok * cols, x.begin() + (tok + 1) * cols);
                    const std::vector<float> at = dequantized(cpu::activation_type(t), activations(t, xt).data(), cols);
                    for (int64_t r = 0; r < rows; ++r) {
                        double exact = 0, with_act = 0, m = 0;
                        for (int64_t i = 0; i < cols; ++i) {
                            exact += static_cast<double>(wf[r][i]) * xt[i];
                            with_act += static_cast<double>(wf[r][i]) * at[i];
                            m += std::fabs(static_cast<double>(wf[r][i]) * xt[i]);
                        }
                        const double got = y[tok * rows + r];
                        ASSERT_LE(std::fabs(got - with_act), 1e-5 * m + 1e-30)
                            << name_of(t) << " " << cpu::isa_name(isa) << " threads " << threads << " token " << tok
                            << " row " << r;
                        ASSERT_LE(std::fabs(got - exact), 1.5e-2 * m + 1e-30) << name_of(t) << " token " << tok;
                    }
                }
            }
        }
    }
}

// Each matmul output equals the single dot product of the same ISA bit for bit (tiles do per-token work in the
// same order, and so do the decode kernels that take several weight rows at once), and 1 and 2 threads give
// identical results. 9 rows: runs of 4 rows and a remainder on either thread count.
TEST_P(PerType, MatmulTilesEqualSingleDotsExactly) {
    const TensorType t = GetParam();
    constexpr int64_t rows = 9, cols = 256;
    std::mt19937 rng(13);
    const size_t row_bytes = ember::gguf::row_bytes(t, cols);
    std::vector<uint8_t> weights;
    for (int64_t r = 0; r < rows; ++r) {
        const std::vector<uint8_t> row = ember::test::random_row(t, cols, rng);
        weights.insert(weights.end(), row.begin(), row.end());
    }
    const cpu::WeightMatrix w{t, weights.data(), rows, cols, row_bytes};
    for (int64_t n_tokens : {1, 7}) {
        const std::vector<float> x = ember::test::gaussian(rng, cols * n_tokens);
        std::vector<std::byte> scratch(cpu::activation_bytes(t, cols, n_tokens));
        for (Isa isa : {Isa::scalar, Isa::avx2}) {
            std::vector<float> y1(rows * n_tokens), y2(rows * n_tokens);
            cpu::ThreadPool one(1), two(2);
            cpu::matmul(isa, w, x.data(), n_tokens, y1.data(), one, scratch);
            cpu::matmul(isa, w, x.data(), n_tokens, y2.data(), two, scratch);
            EXPECT_EQ(y1, y2) << name_of(t) << " " << cpu::isa_name(isa);
            for (int64_t tok = 0; tok < n_tokens; ++tok) {
                const std::vector<float> xt(x.begin() + tok * cols, x.begin() + (tok + 1) * cols);
                const std::vector<std::byte> act = activations(t, xt);
                for (int64_t r = 0; r < rows; ++r)
                    ASSERT_EQ(y1[tok * rows + r], cpu::dot(isa, t, weights.data() + r * row_bytes, act.data(), cols))
                        << name_of(t) << " " << cpu::isa_name(isa) << " token " << tok << " of " << n_tokens
                        << " row " << r;
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, PerType, testing::ValuesIn(ember::test::kernel_types()),
                         [](const auto& param_info) { return name_of(param_info.param); });

TEST(Kernels, ScalarAndAvx2PathsBothRan) {
    if (!cpu::isa_supported(Isa::avx2)) GTEST_SKIP() << "this CPU has no AVX2/FMA/F16C";
    EXPECT_EQ(cpu::best_isa(), Isa::avx2);
    std::mt19937 rng(17);
    for (TensorType t : ember::test::kernel_types()) {
        const std::vector<uint8_t> w = ember::test::random_row(t, 256, rng);
        const std::vector<std::byte> act = activations(t, ember::test::gaussian(rng, 256));
        const cpu::KernelCounts before = cpu::kernel_counts();
        cpu::dot(Isa::scalar, t, w.data(), act.data(), 256);
        const cpu::KernelCounts mid = cpu::kernel_counts();
        EXPECT_EQ(mid.scalar, before.scalar + 1) << name_of(t);
        EXPECT_EQ(mid.avx2, before.avx2) << name_of(t);
        cpu::dot(Isa::avx2, t, w.data(), act.data(), 256);
        const cpu::KernelCounts after = cpu::kernel_counts();
        EXPECT_EQ(after.avx2, mid.avx2 + 1) << name_of(t);
        EXPECT_EQ(after.scalar, mid.scalar) << name_of(t);
    }
    // A one-thread matmul runs on this thread: one call per row and tile of up to 8 tokens (10 tokens: 8 + 2).
    const std::vector<uint8_t> w = ember::test::random_row(TensorType::Q4_0_ROCMFP4, 3 * 64, rng);
    const std::vector<float> x = ember::test::gaussian(rng, 64 * 10);
    std::vector<std::byte> scratch(cpu::activation_bytes(TensorType::Q4_0_ROCMFP4, 64, 10));
    std::vector<float> y(30);
    cpu::ThreadPool pool(1);
    const cpu::KernelCounts before = cpu::kernel_counts();
    cpu::matmul(Isa::avx2, {TensorType::Q4_0_ROCMFP4, w.data(), 3, 64, 36}, x.data(), 10, y.data(), pool, scratch);
    EXPECT_EQ(cpu::kernel_counts().avx2, before.avx2 + 3 * 2);
}

// ../shared/specs/rocmfp4.md §8.4: the worked example's blocks against activations of all 1.0.
TEST(Kernels, RocmFp4SpecDotCheck) {
    const uint8_t dual[18] = {0x00, 0x91, 0x49, 0xE2, 0x7A, 0xF3, 0x1B, 0xA4, 0x3C,
                              0xC5, 0x5D, 0xE6, 0x1E, 0xC7, 0x5F, 0x01, 0x38, 0x30};
    const uint8_t fast[17] = {0x00, 0x91, 0x29, 0xC2, 0x4A, 0xC3, 0x0B, 0x94, 0x1C,
                              0xA5, 0x3D, 0xC6, 0x1E, 0xA7, 0x3F, 0x01, 0x38};
    q::block::Q8_0 ones{};
    q::store_fp16(ones.d, 1.0f);
    for (int8_t& v : ones.qs) v = 1;
    // The activation row as quantize_activations lays it out: the block, then its scale as a float.
    ASSERT_EQ(cpu::activation_bytes(TensorType::Q4_0_ROCMFP4, 32), sizeof ones + sizeof(float));
    std::vector<std::byte> act(sizeof ones + sizeof(float));
    const float one = 1.0f;
    std::memcpy(act.data(), &ones, sizeof ones);
    std::memcpy(act.data() + sizeof ones, &one, sizeof one);
    for (Isa isa : {Isa::scalar, cpu::best_isa()}) {
        EXPECT_EQ(cpu::dot(isa, TensorType::Q4_0_ROCMFP4, dual, act.data(), 32), -1.0f);
        EXPECT_EQ(cpu::dot(isa, TensorType::Q4_0_ROCMFP4_FAST, fast, act.data(), 32), -1.5f);
    }
}

TEST(Kernels, ActivationTypes) {
    EXPECT_EQ(cpu::activation_type(TensorType::Q4_0_ROCMFP4), TensorType::Q8_0);
    EXPECT_EQ(cpu::activation_type(TensorType::Q4_1), TensorType::Q8_0);
    EXPECT_EQ(cpu::activation_type(TensorType::MXFP4), TensorType::Q8_0);
    EXPECT_EQ(cpu::activation_type(TensorType::Q6_K), TensorType::Q8_K);
    EXPECT_EQ(cpu::activation_type(TensorType::BF16), TensorType::F32);
    EXPECT_EQ(cpu::activation_bytes(TensorType::Q4_K, 512, 3), 3u * 2 * 292);
    EXPECT_EQ(cpu::activation_bytes(TensorType::F16, 100), 400u);
}

TEST(Kernels, BadArgumentsAreOneLineErrors) {
    std::vector<uint8_t> w(18 * 4);
    std::vector<float> x(64), y(2);
    std::vector<std::byte> small(10);
    cpu::ThreadPool pool(1);
    EXPECT_EQ(error_of([&] {
                  cpu::matvec(Isa::scalar, {TensorType::Q4_0, w.data(), 2, 64, 36}, x.data(), y.data(), pool, small);
              }),
              "activation scratch of 10 bytes, need 76");
    EXPECT_EQ(error_of([&] { cpu::activation_type(TensorType::IQ2_XXS); }), "no CPU kernel for weight type iq2_xxs");
    EXPECT_EQ(error_of([&] {
                  cpu::matvec(Isa::scalar, {TensorType::Q4_0, w.data(), 2, 48, 36}, x.data(), y.data(), pool, small);
              }),
              "row of 48 weights is not a multiple of the q4_0 block size 32");
}

}  // namespace
