// SPDX-License-Identifier: MIT
// Row validators and the errors of the public functions: one line, naming the block and the bad value.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "common/error_message.h"
#include "quant/quant.h"
#include "quant/reference_types.h"

namespace {

using ember::gguf::TensorType;
using ember::test::error_of;
namespace q = ember::quant;

std::vector<uint8_t> quantized_ones(TensorType t, int64_t n) {
    std::vector<float> x(static_cast<size_t>(n));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i));
    std::vector<uint8_t> out(ember::gguf::row_bytes(t, n));
    q::quantize_row(t, x.data(), out.data(), n);
    return out;
}

TEST(Validate, QuantizedRowsOfEveryTypePass) {
    for (TensorType t : ember::test::kReferenceTypes) {
        const std::vector<uint8_t> row = quantized_ones(t, 512);
        EXPECT_NO_THROW(q::validate_row(t, row.data(), 512)) << ember::gguf::traits(t).name;
    }
}

TEST(Validate, RocmScaleBytesAbove0x7EAreRejected) {
    struct Case {
        TensorType type;
        size_t scale_offset;
    };
    for (const Case c : {Case{TensorType::Q4_0_ROCMFP4, 17}, Case{TensorType::Q4_0_ROCMFP4_FAST, 16},
                         Case{TensorType::Q6_0_ROCMFPX, 24}, Case{TensorType::Q8_0_ROCMFPX, 32},
                         Case{TensorType::Q3_0_ROCMFPX, 12}}) {
        const auto bytes = ember::gguf::traits(c.type).block_bytes;
        for (uint8_t bad : {uint8_t{0x7F}, uint8_t{0x80}, uint8_t{0xFF}}) {
            std::vector<uint8_t> row = quantized_ones(c.type, 32 * 20);
            row[17 * bytes + c.scale_offset] = bad;
            char expected[64];
            std::snprintf(expected, sizeof expected, "block 17: scale byte 0x%02X > 0x7E", bad);
            EXPECT_EQ(error_of([&] { q::validate_row(c.type, row.data(), 32 * 20); }), expected);
        }
        std::vector<uint8_t> row = quantized_ones(c.type, 64);
        row[c.scale_offset] = 0x7E;  // the largest valid byte
        EXPECT_NO_THROW(q::validate_row(c.type, row.data(), 64));
    }
}

TEST(Validate, NonFiniteFp16ScalesAreRejected) {
    std::vector<uint8_t> row = quantized_ones(TensorType::Q4_0, 128);
    row[2 * 18] = 0x00;
    row[2 * 18 + 1] = 0x7c;  // +inf
    EXPECT_EQ(error_of([&] { q::validate_row(TensorType::Q4_0, row.data(), 128); }),
              "block 2: scale d is infinite (fp16 0x7C00)");
    std::vector<uint8_t> k = quantized_ones(TensorType::Q4_K, 512);
    k[144 + 2] = 0x01;
    k[144 + 3] = 0xfe;  // dmin of block 1: NaN
    EXPECT_EQ(error_of([&] { q::validate_row(TensorType::Q4_K, k.data(), 512); }),
              "block 1: scale dmin is NaN (fp16 0xFE01)");
}

TEST(Validate, NonFiniteFloatWeightsAreRejected) {
    std::vector<float> x(64, 1.0f);
    x[9] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_EQ(error_of([&] { q::validate_row(TensorType::F32, x.data(), 64); }), "weight 9 is NaN");
    std::vector<uint16_t> h(64, 0x3c00);
    h[63] = 0xfc00;
    EXPECT_EQ(error_of([&] { q::validate_row(TensorType::F16, h.data(), 64); }), "weight 63 is infinite");
}

TEST(Validate, Mxfp4NaNScaleIsRejected) {
    std::vector<uint8_t> row = quantized_ones(TensorType::MXFP4, 64);
    row[17] = 0xff;
    EXPECT_EQ(error_of([&] { q::validate_row(TensorType::MXFP4, row.data(), 64); }),
              "block 1: scale byte 0xFF is NaN in E8M0");
}

TEST(Validate, Q8KBlockSumsMustMatchTheCodes) {
    std::vector<uint8_t> row = quantized_ones(TensorType::Q8_K, 256);
    row[4 + 256 + 6] ^= 1;  // bsums[3]
    EXPECT_NE(error_of([&] { q::validate_row(TensorType::Q8_K, row.data(), 256); }).find("block 0: bsums[3]"),
              std::string::npos);
}

TEST(Errors, LengthsThatAreNotAMultipleOfTheBlockSize) {
    std::vector<float> x(48, 1.0f);
    std::vector<uint8_t> out(64);
    EXPECT_EQ(error_of([&] { q::quantize_row(TensorType::Q4_0_ROCMFP4, x.data(), out.data(), 48); }),
              "row of 48 weights is not a multiple of the q4_0_rocmfp4 block size 32");
    EXPECT_EQ(error_of([&] { q::dequantize_row(TensorType::Q6_K, out.data(), x.data(), 48); }),
              "row of 48 weights is not a multiple of the q6_K block size 256");
    EXPECT_EQ(error_of([&] { q::validate_row(TensorType::Q8_0, out.data(), 33); }),
              "row of 33 weights is not a multiple of the q8_0 block size 32");
}

TEST(Errors, TypesWithoutAReferenceImplementation) {
    std::vector<float> x(256, 1.0f);
    std::vector<uint8_t> out(1024);
    EXPECT_FALSE(q::can_quantize(TensorType::IQ2_XXS));
    EXPECT_FALSE(q::can_dequantize(TensorType::IQ2_XXS));
    EXPECT_EQ(error_of([&] { q::quantize_row(TensorType::IQ2_XXS, x.data(), out.data(), 256); }),
              "no reference quantizer for tensor type iq2_xxs");
    EXPECT_EQ(error_of([&] { q::dequantize_row(static_cast<TensorType>(77), out.data(), x.data(), 256); }),
              "no reference dequantizer for tensor type type id 77");
}

TEST(Errors, EveryTypeOfTheIssueHasAQuantizerAndADequantizer) {
    for (TensorType t : ember::test::kReferenceTypes) {
        EXPECT_TRUE(q::can_quantize(t)) << ember::gguf::traits(t).name;
        EXPECT_TRUE(q::can_dequantize(t)) << ember::gguf::traits(t).name;
    }
}

}  // namespace
