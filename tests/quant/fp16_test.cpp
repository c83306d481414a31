// SPDX-License-Identifier: MIT
// fp16/bf16 conversions against the compiler's _Float16 (round to nearest even in libgcc/compiler-rt) on a
// sweep of 2^24 float bit patterns, and bf16 against its definition.
#include <gtest/gtest.h>

#include <cmath>

#include "quant/quant.h"

namespace {

namespace q = ember::quant;

TEST(Fp16, EveryHalfRoundTripsThroughFloat) {
    for (uint32_t h = 0; h < 65536; ++h) {
        const float f = q::fp16_to_fp32(static_cast<uint16_t>(h));
        if (std::isnan(f)) {
            EXPECT_EQ(h & 0x7c00, 0x7c00u);
            EXPECT_TRUE(q::fp32_to_fp16(f) & 0x3ff);
            continue;
        }
        ASSERT_EQ(q::fp32_to_fp16(f), h) << "half 0x" << std::hex << h;
        ASSERT_EQ(static_cast<float>(static_cast<_Float16>(f)), f);
    }
}

TEST(Fp16, FloatToHalfRoundsLikeTheCompiler) {
    for (uint64_t bits = 0; bits < (1ull << 32); bits += 251) {
        const float f = q::bits_float(static_cast<uint32_t>(bits));
        const auto want = static_cast<_Float16>(f);
        uint16_t want_bits;
        std::memcpy(&want_bits, &want, 2);
        const uint16_t got = q::fp32_to_fp16(f);
        if (std::isnan(f)) {
            ASSERT_EQ(got & 0x7c00, 0x7c00);
            ASSERT_NE(got & 0x3ff, 0);
            continue;
        }
        ASSERT_EQ(got, want_bits) << "float bits 0x" << std::hex << bits << " (" << f << ")";
    }
}

TEST(Bf16, ConversionsFollowTheDefinition) {
    EXPECT_EQ(q::fp32_to_bf16(1.0f), 0x3f80);
    EXPECT_EQ(q::fp32_to_bf16(q::bits_float(0x3f808000)), 0x3f80);  // tie to even (down)
    EXPECT_EQ(q::fp32_to_bf16(q::bits_float(0x3f818000)), 0x3f82);  // tie to even (up)
    EXPECT_EQ(q::fp32_to_bf16(q::bits_float(0x3f808001)), 0x3f81);
    EXPECT_EQ(q::fp32_to_bf16(q::bits_float(0x7f7fffff)), 0x7f80);  // rounds up to infinity
    EXPECT_EQ(q::fp32_to_bf16(q::bits_float(0x7f800001)), 0x7fc0);  // signalling NaN comes out quiet
    for (uint32_t h = 0; h < 65536; ++h) EXPECT_EQ(q::float_bits(q::bf16_to_fp32(static_cast<uint16_t>(h))), h << 16);
}

}  // namespace
