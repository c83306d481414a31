// SPDX-License-Identifier: MIT
// F32, F16 and BF16 rows: plain element conversions. The validators reject NaN and infinite weights.
#include <cmath>
#include <cstdio>

#include "quant/formats.h"

namespace ember::quant::detail {

namespace {

[[noreturn]] void bad_weight(int64_t i, float v) {
    throw Error("weight " + std::to_string(i) + " is " + (std::isnan(v) ? "NaN" : "infinite"));
}

}  // namespace

void f32_dequantize(const void* src, float* dst, int64_t n) { std::memcpy(dst, src, static_cast<size_t>(n) * 4); }

void f32_quantize(const float* src, void* dst, int64_t n, const float*) {
    std::memcpy(dst, src, static_cast<size_t>(n) * 4);
}

void f32_validate(const void* src, int64_t n) {
    const auto* p = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n; ++i) {
        const float v = load_f32(p + 4 * i);
        if (!std::isfinite(v)) bad_weight(i, v);
    }
}

void f16_dequantize(const void* src, float* dst, int64_t n) {
    const auto* p = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = load_fp16(p + 2 * i);
}

void f16_quantize(const float* src, void* dst, int64_t n, const float*) {
    auto* p = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n; ++i) store_fp16(p + 2 * i, src[i]);
}

void f16_validate(const void* src, int64_t n) {
    const auto* p = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n; ++i) {
        const float v = load_fp16(p + 2 * i);
        if (!std::isfinite(v)) bad_weight(i, v);
    }
}

void bf16_dequantize(const void* src, float* dst, int64_t n) {
    const auto* p = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(load_u16(p + 2 * i));
}

void bf16_quantize(const float* src, void* dst, int64_t n, const float*) {
    auto* p = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = fp32_to_bf16(src[i]);
        std::memcpy(p + 2 * i, &h, 2);
    }
}

void bf16_validate(const void* src, int64_t n) {
    const auto* p = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n; ++i) {
        const float v = bf16_to_fp32(load_u16(p + 2 * i));
        if (!std::isfinite(v)) bad_weight(i, v);
    }
}

}  // namespace ember::quant::detail
