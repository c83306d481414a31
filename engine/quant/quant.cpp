// SPDX-License-Identifier: MIT
// The public entry points: look up the type's format, check the length, call the family's row function.
#include <array>
#include <cmath>
#include <cstdio>

#include "quant/formats.h"

namespace ember::quant {

namespace detail {

void bad_block(int64_t block, const std::string& what) {
    throw Error("block " + std::to_string(block) + ": " + what);
}

void check_fp16_scale(int64_t block, const char* field, const uint8_t* p) {
    const uint16_t h = load_u16(p);
    if ((h & 0x7c00) == 0x7c00) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%04X", h);
        bad_block(block, std::string(field) + " is " + (h & 0x3ff ? "NaN" : "infinite") + " (fp16 " + hex + ")");
    }
}

}  // namespace detail

namespace {

using namespace detail;

template <typename Block>
constexpr Format nibble_format(TensorType type) {
    return {type, NibbleRows<Block>::dequantize, NibbleRows<Block>::quantize, NibbleRows<Block>::validate};
}

constexpr std::array kFormats = {
    Format{TensorType::F32, f32_dequantize, f32_quantize, f32_validate},
    Format{TensorType::F16, f16_dequantize, f16_quantize, f16_validate},
    Format{TensorType::BF16, bf16_dequantize, bf16_quantize, bf16_validate},
    Format{TensorType::Q8_0, q8_0_dequantize, q8_0_quantize, q8_0_validate},
    Format{TensorType::MXFP4, mxfp4_dequantize, mxfp4_quantize, mxfp4_validate},
    Format{TensorType::Q2_K, q2_k_dequantize, q2_k_quantize, q2_k_validate},
    Format{TensorType::Q3_K, q3_k_dequantize, q3_k_quantize, q3_k_validate},
    Format{TensorType::Q4_K, q4_k_dequantize, q4_k_quantize, q4_k_validate},
    Format{TensorType::Q5_K, q5_k_dequantize, q5_k_quantize, q5_k_validate},
    Format{TensorType::Q6_K, q6_k_dequantize, q6_k_quantize, q6_k_validate},
    Format{TensorType::Q8_K, q8_k_dequantize, q8_k_quantize, q8_k_validate},
    Format{TensorType::Q4_0_ROCMFP4, rocmfp4_dequantize, rocmfp4_quantize, rocmfp4_validate},
    Format{TensorType::Q4_0_ROCMFP4_FAST, rocmfp4_fast_dequantize, rocmfp4_fast_quantize, rocmfp4_fast_validate},
    Format{TensorType::Q6_0_ROCMFPX, rocmfp6_dequantize, rocmfp6_quantize, rocmfp6_validate},
    Format{TensorType::Q8_0_ROCMFPX, rocmfp8_dequantize, rocmfp8_quantize, rocmfp8_validate},
    Format{TensorType::Q3_0_ROCMFPX, rocmfp3_dequantize, rocmfp3_quantize, rocmfp3_validate},
    nibble_format<block::Q4_0>(TensorType::Q4_0),
    nibble_format<block::Q4_1>(TensorType::Q4_1),
    nibble_format<block::Q5_0>(TensorType::Q5_0),
    nibble_format<block::Q5_1>(TensorType::Q5_1),
};

const Format* find_format(TensorType type) {
    for (const Format& f : kFormats)
        if (f.type == type) return &f;
    return nullptr;
}

std::string type_name(TensorType type) {
    const gguf::TypeTraits* t = gguf::find_type(static_cast<uint32_t>(type));
    return t ? std::string(t->name) : "type id " + std::to_string(static_cast<uint32_t>(type));
}

const Format& format_for(TensorType type, const char* what) {
    const Format* f = find_format(type);
    if (!f) throw Error("no reference " + std::string(what) + " for tensor type " + type_name(type));
    return *f;
}

// The number of whole blocks in n weights; throws when n is not a multiple of the block size.
int64_t block_count(TensorType type, int64_t n) {
    const gguf::TypeTraits& t = gguf::traits(type);
    if (n < 0 || n % t.block_size != 0)
        throw Error("row of " + std::to_string(n) + " weights is not a multiple of the " + std::string(t.name) +
                    " block size " + std::to_string(t.block_size));
    return n / t.block_size;
}

}  // namespace

bool can_quantize(TensorType type) {
    const Format* f = find_format(type);
    return f && f->quantize;
}

bool can_dequantize(TensorType type) { return find_format(type) != nullptr; }

void dequantize_row(TensorType type, const void* src, float* dst, int64_t n) {
    const Format& f = format_for(type, "dequantizer");
    f.dequantize(src, dst, block_count(type, n));
}

void quantize_row(TensorType type, const float* src, void* dst, int64_t n, const float* imatrix) {
    const Format& f = format_for(type, "quantizer");
    block_count(type, n);
    f.quantize(src, dst, n, imatrix);
}

void validate_row(TensorType type, const void* src, int64_t n) {
    const Format& f = format_for(type, "validator");
    f.validate(src, block_count(type, n));
}

}  // namespace ember::quant
