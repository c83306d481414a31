// SPDX-License-Identifier: MIT
// ROCmFP4: Q4_0_ROCMFP4 (dual scale, 18-byte blocks) and Q4_0_ROCMFP4_FAST (one scale, 17-byte blocks), as in
// ../shared/specs/rocmfp4.md §2-§4. Built with -ffp-contract=off (see scale_search.h).
#include <cstdio>

#include "quant/formats.h"
#include "quant/scale_search.h"

namespace ember::quant::detail {

namespace {

using block::qk;

struct Fp4Codec {
    static constexpr float start_divisor = 10.0f;
    static float top(float) { return 10.0f; }
    // Nearest Codebook10 magnitude with inclusive thresholds (a tie goes to the smaller magnitude, §4.1): the
    // number of thresholds a exceeds is the magnitude's code.
    static uint8_t encode(float x, float, float inv) {
        if (!std::isfinite(x)) return 0;
        const float a = std::fabs(x * inv);
        const int m = (a > 0.5f) + (a > 1.5f) + (a > 2.5f) + (a > 3.5f) + (a > 5.0f) + (a > 7.0f) + (a > 9.0f);
        return static_cast<uint8_t>(m != 0 && x < 0.0f ? 8 + m : m);
    }
    static float value(uint8_t code) { return static_cast<float>(kRocmfp4Values[code]); }
};

// Chooses the byte and the codes of one sub-block of `sub` weights (16: dual, 32: FAST).
uint8_t quantize_sub_block(const float* x, const float* imatrix, float sigma2, int sub, uint8_t* codes) {
    float w[qk];
    if (imatrix) rocmfp_importance(x, imatrix, sub, sigma2, w);
    const int e = choose_scale_byte<Fp4Codec>(x, imatrix ? w : nullptr, sub);
    encode_sub_block<Fp4Codec>(x, sub, e, codes);
    return static_cast<uint8_t>(e);
}

void pack_codes(const uint8_t* codes, uint8_t* qs) {
    for (int j = 0; j < qk / 2; ++j) qs[j] = static_cast<uint8_t>(codes[j] | (codes[j + qk / 2] << 4));
}

float nibble_value(const uint8_t* qs, int i) {
    const int code = i < qk / 2 ? (qs[i] & 0x0f) : (qs[i - qk / 2] >> 4);
    return static_cast<float>(kRocmfp4Values[code]);
}

}  // namespace

void check_rocmfp_scale_byte(int64_t block, uint8_t e) {
    if (e > kRocmfpMaxScaleByte) {
        char text[48];
        std::snprintf(text, sizeof text, "scale byte 0x%02X > 0x7E", e);
        bad_block(block, text);
    }
}

void rocmfp4_dequantize(const void* src, float* dst, int64_t n_blocks) {
    const auto* b = static_cast<const block::Q4_0_ROCMFP4*>(src);
    for (int64_t k = 0; k < n_blocks; ++k, dst += qk) {
        const float s0 = rocmfp_scale(b[k].e[0]);
        const float s1 = rocmfp_scale(b[k].e[1]);
        for (int i = 0; i < qk; ++i) dst[i] = nibble_value(b[k].qs, i) * (i < qk / 2 ? s0 : s1);
    }
}

void rocmfp4_quantize(const float* x, void* dst, int64_t n, const float* imatrix) {
    auto* b = static_cast<block::Q4_0_ROCMFP4*>(dst);
    const float sigma2 = imatrix ? rocmfp_sigma2(x, n) : 0.0f;
    for (int64_t k = 0; k < n / qk; ++k) {
        const float* im = imatrix ? imatrix + k * qk : nullptr;
        uint8_t codes[qk];
        b[k].e[0] = quantize_sub_block(x + k * qk, im, sigma2, 16, codes);
        b[k].e[1] = quantize_sub_block(x + k * qk + 16, im ? im + 16 : nullptr, sigma2, 16, codes + 16);
        pack_codes(codes, b[k].qs);
    }
}

void rocmfp4_validate(const void* src, int64_t n_blocks) {
    const auto* b = static_cast<const block::Q4_0_ROCMFP4*>(src);
    for (int64_t k = 0; k < n_blocks; ++k) {
        check_rocmfp_scale_byte(k, b[k].e[0]);
        check_rocmfp_scale_byte(k, b[k].e[1]);
    }
}

void rocmfp4_fast_dequantize(const void* src, float* dst, int64_t n_blocks) {
    const auto* b = static_cast<const block::Q4_0_ROCMFP4_FAST*>(src);
    for (int64_t k = 0; k < n_blocks; ++k, dst += qk) {
        const float s = rocmfp_scale(b[k].e);
        for (int i = 0; i < qk; ++i) dst[i] = nibble_value(b[k].qs, i) * s;
    }
}

void rocmfp4_fast_quantize(const float* x, void* dst, int64_t n, const float* imatrix) {
    auto* b = static_cast<block::Q4_0_ROCMFP4_FAST*>(dst);
    const float sigma2 = imatrix ? rocmfp_sigma2(x, n) : 0.0f;
    for (int64_t k = 0; k < n / qk; ++k) {
        uint8_t codes[qk];
        b[k].e = quantize_sub_block(x + k * qk, imatrix ? imatrix + k * qk : nullptr, sigma2, qk, codes);
        pack_codes(codes, b[k].qs);
    }
}

void rocmfp4_fast_validate(const void* src, int64_t n_blocks) {
    const auto* b = static_cast<const block::Q4_0_ROCMFP4_FAST*>(src);
    for (int64_t k = 0; k < n_blocks; ++k) check_rocmfp_scale_byte(k, b[k].e);
}

}  // namespace ember::quant::detail
