// SPDX-License-Identifier: MIT
// The AVX2 Q8_0 activation quantizer against engine/quant's reference: its rounding on every float of magnitude
// 2^-26 to 128 (the range quantization scales codes into), and whole rows byte for byte, including all-zero blocks,
// NaN, infinities, subnormals and values on the rounding boundaries.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cpu/cpu_kernels.h"
#include "cpu/dot_kernels.h"
#include "quant/quant.h"

namespace {

using ember::cpu::Isa;
using ember::gguf::TensorType;
namespace detail = ember::cpu::detail;

TEST(QuantizeAvx2, RoundingIsHalfAwayFromZeroOnEveryFloatOfTheCodeRange) {
    if (!ember::cpu::isa_supported(Isa::avx2)) GTEST_SKIP() << "this CPU has no AVX2/FMA/F16C";
    constexpr uint32_t kFirst = 0x32800000u;  // 2^-26: below it both give 0
    constexpr uint32_t kLast = 0x43000000u;   // 128
    constexpr size_t kBatch = 1 << 16;
    std::vector<float> in(kBatch), out(kBatch);
    uint64_t wrong = 0, checked = 0;
    for (const uint32_t sign : {0u, 0x80000000u}) {
        for (uint32_t bits = kFirst; bits < kLast; bits += kBatch) {
            for (size_t i = 0; i < kBatch; ++i) in[i] = std::bit_cast<float>((bits + static_cast<uint32_t>(i)) | sign);
            detail::avx2_round_half_away(in.data(), out.data(), kBatch);
            for (size_t i = 0; i < kBatch; ++i) {
                if (std::bit_cast<uint32_t>(out[i]) != std::bit_cast<uint32_t>(std::round(in[i])) && wrong++ < 5)
                    ADD_FAILURE() << in[i] << " rounds to " << out[i] << ", std::round gives " << std::round(in[i]);
            }
            checked += kBatch;
        }
    }
    EXPECT_EQ(wrong, 0u) << "of " << checked << " floats";
}

TEST(QuantizeAvx2, RowsAreByteIdenticalToTheReference) {
    if (!ember::cpu::isa_supported(Isa::avx2)) GTEST_SKIP() << "this CPU has no AVX2/FMA/F16C";
    std::mt19937 rng(7);
    const int64_t cols = 32 * 64;
    for (int round = 0; round < 200; ++round) {
        std::normal_distribution<float> normal(0.0f, std::pow(10.0f, static_cast<float>(round % 12) - 6.0f));
        std::vector<float> x(static_cast<size_t>(cols));
        for (float& v : x) v = normal(rng);
        if (round % 5 == 1) std::fill(x.begin(), x.begin() + 32, 0.0f);  // an all-zero block
        if (round % 7 == 2) {                                            // non-finite and extreme values
            x[3] = std::numeric_limits<float>::quiet_NaN();
            x[40] = std::numeric_limits<float>::infinity();
            x[77] = -std::numeric_limits<float>::infinity();
            x[100] = std::numeric_limits<float>::denorm_min();
            x[130] = 3e38f;
        }
        if (round % 3 == 0) {  // codes landing on halves: a block of k / 2 steps of amax / 127
            for (int i = 0; i < 32; ++i) x[static_cast<size_t>(64 + i)] = static_cast<float>(i - 16) * 0.5f;
            x[64] = 127.0f;
        }
        std::vector<std::byte> want(static_cast<size_t>(ember::gguf::row_bytes(TensorType::Q8_0, cols)));
        std::vector<std::byte> got(want.size());
        ember::quant::quantize_row(TensorType::Q8_0, x.data(), want.data(), cols);
        detail::avx2_quantize_q8_0(x.data(), got.data(), cols);
        ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0) << "round " << round;
    }
}

}  // namespace
