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

float load_bf16(const uint8_t* p) { return bf16_to_fp32(load_u16(p)); }

// Elements of `width` bytes, each read by `load`.
template <int width, typename Load>
void widen_elements(const void* src, float* dst, int64_t n, Load load) {
    const auto* p = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = load(p + width * i);
}

template <int width, typename Load>
void check_finite_elements(const void* src, int64_t n, Load load) {
    const auto* p = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n; ++i) {
        const float v = load(p + width * i);
        if (!std::isfinite(v)) bad_weight(i, v);
    }
}

}  // namespace

void f32_dequantize(const void* src, float* dst, int64_t n) { std::memcpy(dst, src, static_cast<size_t>(n) * 4); }

void f32_quantize(const float* src, void* dst, int64_t n, const float*) {
    std::memcpy(dst, src, static_cast<size_t>(n) * 4);
}

void f32_validate(const void* src, int64_t n) { check_finite_elements<4>(src, n, load_f32); }

void f16_dequantize(const void* src, float* dst, int64_t n) { widen_elements<2>(src, dst, n, load_fp16); }

void f16_quantize(const float* src, void* dst, int64_t n, const float*) {
    auto* p = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n; ++i) store_fp16(p + 2 * i, src[i]);
}

void f16_validate(const void* src, int64_t n) { check_finite_elements<2>(src, n, load_fp16); }

void bf16_dequantize(const void* src, float* dst, int64_t n) { widen_elements<2>(src, dst, n, load_bf16); }

void bf16_quantize(const float* src, void* dst, int64_t n, const float*) {
    auto* p = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = fp32_to_bf16(src[i]);
        std::memcpy(p + 2 * i, &h, 2);
    }
}

void bf16_validate(const void* src, int64_t n) { check_finite_elements<2>(src, n, load_bf16); }

}  // namespace ember::quant::detail
