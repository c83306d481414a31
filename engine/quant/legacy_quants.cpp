// SPDX-License-Identifier: MIT
// Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0: 32-weight blocks with an fp16 scale (and an fp16 minimum for the _1 types).
// The quantizers are the reference ones: Q4_0/Q5_0 map the weight of largest magnitude to -8/-16, the _1 types
// spread [min, max] over 0..15/0..31, Q8_0 scales by amax/127 and rounds half away from zero.
#include <cmath>

#include "quant/block_rows.h"

namespace ember::quant::detail {

namespace {

using block::qk;

// The weight of largest magnitude (the first one on ties), with its sign.
float signed_absmax(const float* x) {
    float amax = 0.0f;
    float max = 0.0f;
    for (int i = 0; i < qk; ++i) {
        if (std::fabs(x[i]) > amax) {
            amax = std::fabs(x[i]);
            max = x[i];
        }
    }
    return max;
}

void min_max(const float* x, float& min, float& max) {
    min = x[0];
    max = x[0];
    for (int i = 1; i < qk; ++i) {
        min = std::fmin(min, x[i]);
        max = std::fmax(max, x[i]);
    }
}

float inverse_or_zero(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }

// A rounded value as an int8 code in [-127, 127]; NaN (from non-finite input) becomes 0.
int8_t int8_code(float v) {
    if (!(v == v)) return 0;
    return static_cast<int8_t>(std::fmin(std::fmax(v, -127.0f), 127.0f));
}

// Truncation of a non-negative value, clamped to [0, top].
uint8_t trunc_clamp(float v, int top) {
    if (!(v > 0.0f)) return 0;
    if (v >= static_cast<float>(top)) return static_cast<uint8_t>(top);
    return static_cast<uint8_t>(static_cast<int>(v));
}

// Splits 32 codes (0..31) into the Q4_0 nibble layout and, for 5-bit types, the high-bit mask.
void pack_nibbles(const uint8_t* q, uint8_t* qs, uint8_t* qh) {
    uint32_t high = 0;
    for (int j = 0; j < qk / 2; ++j) {
        qs[j] = static_cast<uint8_t>((q[j] & 0x0f) | ((q[j + qk / 2] & 0x0f) << 4));
        high |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
        high |= static_cast<uint32_t>((q[j + qk / 2] >> 4) & 1) << (j + qk / 2);
    }
    if (qh) std::memcpy(qh, &high, 4);
}

// The 4-bit (or, with qh, 5-bit) code of weight i.
int code(const uint8_t* qs, const uint8_t* qh, int i) {
    const int low = i < qk / 2 ? (qs[i] & 0x0f) : (qs[i - qk / 2] >> 4);
    if (!qh) return low;
    uint32_t high;
    std::memcpy(&high, qh, 4);
    return low | static_cast<int>(((high >> i) & 1) << 4);
}

// The 4/5-bit types differ only in what Block has: qh (a fifth code bit) and m (a minimum instead of a zero point
// at the middle code), so NibbleRows serves all four.
template <typename Block>
constexpr bool kHasHighBits = requires(Block b) { b.qh; };
template <typename Block>
constexpr bool kHasMinimum = requires(Block b) { b.m; };
template <typename Block>
constexpr int kTopCode = kHasHighBits<Block> ? 31 : 15;

}  // namespace

template <typename Block>
void NibbleRows<Block>::dequantize(const void* src, float* dst, int64_t n_blocks) {
    const auto* b = blocks_of<Block>(src);
    for (int64_t k = 0; k < n_blocks; ++k, dst += qk) {
        const uint8_t* qh = nullptr;
        if constexpr (kHasHighBits<Block>) qh = b[k].qh;
        const float d = load_fp16(b[k].d);
        if constexpr (kHasMinimum<Block>) {
            const float m = load_fp16(b[k].m);
            for (int i = 0; i < qk; ++i) dst[i] = d * static_cast<float>(code(b[k].qs, qh, i)) + m;
        } else {
            constexpr int zero = (kTopCode<Block> + 1) / 2;
            for (int i = 0; i < qk; ++i) dst[i] = d * static_cast<float>(code(b[k].qs, qh, i) - zero);
        }
    }
}

template <typename Block>
void NibbleRows<Block>::quantize(const float* x, void* dst, int64_t n, const float*) {
    constexpr int top = kTopCode<Block>;
    auto* b = blocks_of<Block>(dst);
    for (int64_t k = 0; k < n / qk; ++k, x += qk) {
        uint8_t q[qk];
        if constexpr (kHasMinimum<Block>) {
            float min, max;
            min_max(x, min, max);
            const float d = (max - min) / static_cast<float>(top);
            const float id = inverse_or_zero(d);
            for (int i = 0; i < qk; ++i) q[i] = trunc_clamp((x[i] - min) * id + 0.5f, top);
            store_fp16(b[k].d, d);
            store_fp16(b[k].m, min);
        } else {
            constexpr float zero = static_cast<float>((top + 1) / 2);
            const float d = signed_absmax(x) / -zero;
            const float id = inverse_or_zero(d);
            for (int i = 0; i < qk; ++i) q[i] = trunc_clamp(x[i] * id + (zero + 0.5f), top);
            store_fp16(b[k].d, d);
        }
        uint8_t* qh = nullptr;
        if constexpr (kHasHighBits<Block>) qh = b[k].qh;
        pack_nibbles(q, b[k].qs, qh);
    }
}

template <typename Block>
void NibbleRows<Block>::validate(const void* src, int64_t n_blocks) {
    check_fp16_block_scales<Block>(src, n_blocks);
}

template struct NibbleRows<block::Q4_0>;
template struct NibbleRows<block::Q4_1>;
template struct NibbleRows<block::Q5_0>;
template struct NibbleRows<block::Q5_1>;

// --- Q8_0 -------------------------------------------------------------------------------------------------------

void q8_0_dequantize(const void* src, float* dst, int64_t n_blocks) {
    const auto* b = blocks_of<block::Q8_0>(src);
    for (int64_t k = 0; k < n_blocks; ++k, dst += qk) {
        const float d = load_fp16(b[k].d);
        for (int i = 0; i < qk; ++i) dst[i] = static_cast<float>(b[k].qs[i]) * d;
    }
}

void q8_0_quantize(const float* x, void* dst, int64_t n, const float*) {
    auto* b = blocks_of<block::Q8_0>(dst);
    for (int64_t k = 0; k < n / qk; ++k, x += qk) {
        float amax = 0.0f;
        for (int i = 0; i < qk; ++i) amax = std::fmax(amax, std::fabs(x[i]));
        const float d = amax / 127.0f;
        const float id = inverse_or_zero(d);
        for (int i = 0; i < qk; ++i) b[k].qs[i] = int8_code(std::round(x[i] * id));  // half away from zero
        store_fp16(b[k].d, d);
    }
}

void q8_0_validate(const void* src, int64_t n_blocks) { check_fp16_block_scales<block::Q8_0>(src, n_blocks); }

}  // namespace ember::quant::detail
