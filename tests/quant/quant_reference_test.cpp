// SPDX-License-Identifier: MIT
// Dequantization and quantization against the independent references of tests/fixtures/make_quant_fixtures.py
// (the gguf package, and a numpy implementation of the ROCmFP4 spec), bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "common/fixture_path.h"
#include "quant/quant.h"
#include "quant/reference_types.h"
#include "quant/type_printer.h"

namespace {

using ember::gguf::TensorType;

std::vector<uint8_t> read_bytes(const std::string& relative) {
    const auto path = ember::test::fixture_path("quant/" + relative);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open fixture " + path.string());
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<float> read_floats(const std::string& relative) {
    const std::vector<uint8_t> bytes = read_bytes(relative);
    std::vector<float> out(bytes.size() / 4);
    std::memcpy(out.data(), bytes.data(), out.size() * 4);
    return out;
}

std::string name_of(TensorType t) { return std::string(ember::gguf::traits(t).name); }

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// A test of one reference type, whose fixture files are named after the type in lower case.
class ReferenceTypeTest : public testing::TestWithParam<TensorType> {
protected:
    const TensorType type = GetParam();
    const std::string name = lower(name_of(type));
    const ember::gguf::TypeTraits& traits = ember::gguf::traits(type);
};

class Dequantize : public ReferenceTypeTest {};

TEST_P(Dequantize, MatchesTheReferenceBitForBit) {
    const std::vector<uint8_t> blocks = read_bytes("dequant/" + name + ".blocks");
    const std::vector<float> expected = read_floats("dequant/" + name + ".f32");
    const int64_t n = static_cast<int64_t>(blocks.size() / traits.block_bytes) * traits.block_size;
    ASSERT_EQ(static_cast<size_t>(n), expected.size());
    ASSERT_TRUE(ember::quant::can_dequantize(type));

    std::vector<float> got(static_cast<size_t>(n));
    ember::quant::dequantize_row(type, blocks.data(), got.data(), n);
    int64_t mismatches = 0;
    for (int64_t i = 0; i < n; ++i) {
        const uint32_t a = ember::quant::float_bits(got[i]), b = ember::quant::float_bits(expected[i]);
        if (a != b && mismatches++ < 5)
            ADD_FAILURE() << name << " weight " << i << " (block " << i / traits.block_size << "): got " << got[i]
                          << " (0x" << std::hex << a << "), expected " << expected[i] << " (0x" << b << std::dec
                          << ")";
    }
    EXPECT_EQ(mismatches, 0);
}

INSTANTIATE_TEST_SUITE_P(
    AllTypes, Dequantize,
    testing::ValuesIn(ember::test::kReferenceTypes),
    [](const auto& param_info) { return name_of(param_info.param); });

class Quantize : public ReferenceTypeTest {};

TEST_P(Quantize, MatchesTheReferenceBitForBit) {
    const std::vector<float> input = read_floats("quant/" + name + ".input.f32");
    const std::vector<uint8_t> expected = read_bytes("quant/" + name + ".blocks");
    const auto n = static_cast<int64_t>(input.size());
    ASSERT_EQ(ember::gguf::row_bytes(type, n), expected.size());
    ASSERT_TRUE(ember::quant::can_quantize(type));

    // Rows of 8 blocks, so that the row-level code paths run too.
    const int64_t row = 8 * traits.block_size;
    std::vector<uint8_t> got(expected.size());
    for (int64_t r = 0; r < n / row; ++r)
        ember::quant::quantize_row(type, input.data() + r * row, got.data() + r * (row / traits.block_size) *
                                   traits.block_bytes, row);
    int64_t mismatches = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] != expected[i] && mismatches++ < 5) {
            const size_t block = i / traits.block_bytes;
            ADD_FAILURE() << name << " block " << block << " byte " << i % traits.block_bytes << ": got 0x"
                          << std::hex << int(got[i]) << ", expected 0x" << int(expected[i]) << std::dec
                          << " (first weight " << input[block * traits.block_size] << ")";
        }
    }
    EXPECT_EQ(mismatches, 0);
}

INSTANTIATE_TEST_SUITE_P(
    PackageAndSpecQuantizers, Quantize,
    testing::Values(TensorType::F16, TensorType::BF16, TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0,
                    TensorType::Q5_1, TensorType::Q8_0, TensorType::MXFP4, TensorType::Q4_0_ROCMFP4,
                    TensorType::Q4_0_ROCMFP4_FAST, TensorType::Q6_0_ROCMFPX, TensorType::Q8_0_ROCMFPX,
                    TensorType::Q3_0_ROCMFPX),
    [](const auto& param_info) { return name_of(param_info.param); });

}  // namespace
