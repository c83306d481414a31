// SPDX-License-Identifier: MIT
// The K-quants Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and the activation type Q8_K: 256-weight super-blocks of 16 or 32-weight
// sub-blocks with small integer scales under an fp16 (Q8_K: fp32) super-block scale. Dequantization and validation;
// the quantizers are in k_quantize.cpp. Each function's comment gives where weight i of a super-block is stored.
// The float operations (sub-block scale first, then times the code, then minus the minimum) are the format's.
#include <cmath>

#include "quant/block_rows.h"

namespace ember::quant::detail {

namespace {

using block::qk_k;

// Q4_K and Q5_K: sub-block s = i / 32 has nibble s & 1 of qs[32 (s / 2) + i % 32]; Q5_K adds bit s of qh[i % 32]
// as the fifth bit.
template <typename Block>
void k4_dequantize(const void* src, float* dst, int64_t n_blocks) {
    const auto* b = blocks_of<Block>(src);
    for (int64_t k = 0; k < n_blocks; ++k, dst += qk_k) {
        const float d = load_fp16(b[k].d);
        const float dmin = load_fp16(b[k].dmin);
        for (int s = 0; s < 8; ++s) {
            uint8_t sc, m;
            k4_scale_min(b[k].scales, s, sc, m);
            const float d1 = d * static_cast<float>(sc);
            const float m1 = dmin * static_cast<float>(m);
            for (int l = 0; l < 32; ++l) {
                int q = (b[k].qs[32 * (s / 2) + l] >> (4 * (s & 1))) & 0x0f;
                if constexpr (requires { b[k].qh; }) q |= ((b[k].qh[l] >> s) & 1) << 4;
                dst[32 * s + l] = d1 * static_cast<float>(q) - m1;
            }
        }
    }
}

}  // namespace

// --- Q2_K: weight i = 128h + 32j + l has q = (qs[32h + l] >> 2j) & 3 and sub-block i / 16 ---------------------------

void q2_k_dequantize(const void* src, float* dst, int64_t n_blocks) {
    const auto* b = blocks_of<block::Q2_K>(src);
    for (int64_t k = 0; k < n_blocks; ++k, dst += qk_k) {
        const float d = load_fp16(b[k].d);
        const float dmin = load_fp16(b[k].dmin);
        for (int i = 0; i < qk_k; ++i) {
            const int h = i / 128, j = (i % 128) / 32, l = i % 32;
            const int q = (b[k].qs[32 * h + l] >> (2 * j)) & 3;
            const uint8_t sc = b[k].scales[i / 16];
            const float dl = d * static_cast<float>(sc & 0x0f);
            const float ml = dmin * static_cast<float>(sc >> 4);
            dst[i] = dl * static_cast<float>(q) - ml;
        }
    }
}

void q2_k_validate(const void* src, int64_t n_blocks) { check_fp16_block_scales<block::Q2_K>(src, n_blocks); }

// --- Q3_K: low 2 bits as Q2_K; the third bit of weight i is bit i / 32 of hmask[i % 32], and a clear bit means -4 --

void q3_k_dequantize(const void* src, float* dst, int64_t n_blocks) {
    const auto* b = blocks_of<block::Q3_K>(src);
    for (int64_t k = 0; k < n_blocks; ++k, dst += qk_k) {
        const float d = load_fp16(b[k].d);
        for (int i = 0; i < qk_k; ++i) {
            const int h = i / 128, j = (i % 128) / 32, l = i % 32;
            const int low = (b[k].qs[32 * h + l] >> (2 * j)) & 3;
            const int high = (b[k].hmask[l] >> (i / 32)) & 1;
            const float dl = d * static_cast<float>(q3_k_scale(b[k].scales, i / 16));
            dst[i] = dl * static_cast<float>(low - (high ? 0 : 4));
        }
    }
}

void q3_k_validate(const void* src, int64_t n_blocks) { check_fp16_block_scales<block::Q3_K>(src, n_blocks); }

// --- Q4_K and Q5_K: see k4_dequantize -----------------------------------------------------------------------------

void q4_k_dequantize(const void* src, float* dst, int64_t n_blocks) {
    k4_dequantize<block::Q4_K>(src, dst, n_blocks);
}

void q4_k_validate(const void* src, int64_t n_blocks) { check_fp16_block_scales<block::Q4_K>(src, n_blocks); }

void q5_k_dequantize(const void* src, float* dst, int64_t n_blocks) {
    k4_dequantize<block::Q5_K>(src, dst, n_blocks);
}

void q5_k_validate(const void* src, int64_t n_blocks) { check_fp16_block_scales<block::Q5_K>(src, n_blocks); }

// --- Q6_K: 16 sub-blocks of 16 with int8 scales, codes biased by 32 ------------------------------------------------
// ql holds, per half h, 64 bytes: byte 64h + l (l < 64) carries weight 128h + l in its low nibble and weight
// 128h + 64 + l in its high nibble. qh byte 32h + l carries the top 2 bits of weight 128h + 32j + l at bit 2j.

void q6_k_dequantize(const void* src, float* dst, int64_t n_blocks) {
    const auto* b = blocks_of<block::Q6_K>(src);
    for (int64_t k = 0; k < n_blocks; ++k, dst += qk_k) {
        const float d = load_fp16(b[k].d);
        for (int i = 0; i < qk_k; ++i) {
            const int h = i / 128, r = i % 128;
            const int low = (b[k].ql[64 * h + r % 64] >> (4 * (r / 64))) & 0x0f;
            const int high = (b[k].qh[32 * h + r % 32] >> (2 * (r / 32))) & 3;
            const float dl = d * static_cast<float>(b[k].scales[i / 16]);
            dst[i] = dl * static_cast<float>((low | (high << 4)) - 32);
        }
    }
}

void q6_k_validate(const void* src, int64_t n_blocks) { check_fp16_block_scales<block::Q6_K>(src, n_blocks); }

// --- Q8_K --------------------------------------------------------------------------------------------------------

void q8_k_dequantize(const void* src, float* dst, int64_t n_blocks) {
    const auto* b = blocks_of<block::Q8_K>(src);
    for (int64_t k = 0; k < n_blocks; ++k, dst += qk_k) {
        const float d = load_f32(b[k].d);
        for (int i = 0; i < qk_k; ++i) dst[i] = d * static_cast<float>(b[k].qs[i]);
    }
}

void q8_k_validate(const void* src, int64_t n_blocks) {
    const auto* b = blocks_of<block::Q8_K>(src);
    for (int64_t k = 0; k < n_blocks; ++k) {
        const float d = load_f32(b[k].d);
        if (!std::isfinite(d)) bad_block(k, std::string("scale d is ") + (std::isnan(d) ? "NaN" : "infinite"));
        for (int s = 0; s < qk_k / 16; ++s) {
            int sum = 0;
            for (int i = 0; i < 16; ++i) sum += b[k].qs[16 * s + i];
            int16_t stored;
            std::memcpy(&stored, b[k].bsums + 2 * s, 2);
            if (stored != sum)
                bad_block(k, "bsums[" + std::to_string(s) + "] is " + std::to_string(stored) + ", the codes sum to " +
                                 std::to_string(sum));
        }
    }
}

}  // namespace ember::quant::detail
