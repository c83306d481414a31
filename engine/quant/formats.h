// SPDX-License-Identifier: MIT
// The per-type row functions behind quant/quant.h, one family per file. The public functions check the length
// against the block size and then call these with whole blocks only.
#pragma once

#include <cstdint>
#include <string>

#include "quant/quant.h"

namespace ember::quant::detail {

// Decodes n_blocks whole blocks into n_blocks * block_size floats.
using DequantizeFn = void (*)(const void* src, float* dst, int64_t n_blocks);
// Encodes one row of n weights (a multiple of the block size); imatrix has n entries or is nullptr.
using QuantizeFn = void (*)(const float* src, void* dst, int64_t n, const float* imatrix);
// Throws ember::Error naming the first bad block (or weight, for float types).
using ValidateFn = void (*)(const void* src, int64_t n_blocks);

struct Format {
    TensorType type;
    DequantizeFn dequantize;
    QuantizeFn quantize;  // nullptr: no reference quantizer
    ValidateFn validate;
};

// Each family file defines its entries; quant.cpp gathers them.
#define EMBER_QUANT_FAMILY(name) \
    void name##_dequantize(const void*, float*, int64_t); \
    void name##_quantize(const float*, void*, int64_t, const float*); \
    void name##_validate(const void*, int64_t);

EMBER_QUANT_FAMILY(f32)
EMBER_QUANT_FAMILY(f16)
EMBER_QUANT_FAMILY(bf16)
EMBER_QUANT_FAMILY(q8_0)
EMBER_QUANT_FAMILY(mxfp4)
EMBER_QUANT_FAMILY(q2_k)
EMBER_QUANT_FAMILY(q3_k)
EMBER_QUANT_FAMILY(q4_k)
EMBER_QUANT_FAMILY(q5_k)
EMBER_QUANT_FAMILY(q6_k)
EMBER_QUANT_FAMILY(q8_k)
EMBER_QUANT_FAMILY(rocmfp4)
EMBER_QUANT_FAMILY(rocmfp4_fast)
EMBER_QUANT_FAMILY(rocmfp6)
EMBER_QUANT_FAMILY(rocmfp8)
EMBER_QUANT_FAMILY(rocmfp3)

#undef EMBER_QUANT_FAMILY

// Q4_0, Q4_1, Q5_0 and Q5_1 (legacy_quants.cpp instantiates it for those four blocks).
template <typename Block>
struct NibbleRows {
    static void dequantize(const void* src, float* dst, int64_t n_blocks);
    static void quantize(const float* src, void* dst, int64_t n, const float* imatrix);
    static void validate(const void* src, int64_t n_blocks);
};

// Messages shared by the validators.
[[noreturn]] void bad_block(int64_t block, const std::string& what);
void check_fp16_scale(int64_t block, const char* field, const uint8_t* p);
void check_rocmfp_scale_byte(int64_t block, uint8_t e);  // > 0x7E is an error

}  // namespace ember::quant::detail
