// SPDX-License-Identifier: MIT
// AVX2 quantization of activation rows to Q8_0, byte-identical to quant::quantize_row (engine/quant's reference):
// the same block maximum, scale d = amax / 127 stored as fp16, codes round(x / d) half away from zero, clamped to
// +-127, NaN to 0. Decode quantizes every product's input on one thread while the others wait, so its speed shows.
#include "cpu/dot_kernels.h"

#include "cpu/avx2_common.h"  // last, in a block of its own (include sorting must not move it): opens the AVX2 region

namespace ember::cpu::detail {

namespace {

// round(v) half away from zero, for |v| < 2^23: v + copysign(0.5 - 2^-25, v), truncated. The constant just under
// 0.5 keeps values just under a half from rounding up in the addition (quantize_avx2_test checks every float).
__m256 round_half_away(__m256 v) {
    const __m256 sign = _mm256_and_ps(v, _mm256_set1_ps(-0.0f));
    const __m256 half = _mm256_or_ps(_mm256_set1_ps(0.49999997f), sign);
    return _mm256_round_ps(_mm256_add_ps(v, half), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
}

}  // namespace

void avx2_round_half_away(const float* x, float* out, int64_t n) {
    for (int64_t i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, round_half_away(_mm256_loadu_ps(x + i)));
}

void avx2_quantize_q8_0(const float* x, void* dst, int64_t cols) {
    auto* b = static_cast<quant::block::Q8_0*>(dst);
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    for (int64_t k = 0; k < cols / 32; ++k, x += 32) {
        __m256 v[4];
        __m256 amax = _mm256_setzero_ps();
        for (int j = 0; j < 4; ++j) {
            v[j] = _mm256_loadu_ps(x + 8 * j);
            amax = _mm256_max_ps(_mm256_and_ps(v[j], abs_mask), amax);  // a NaN lane keeps amax, as std::fmax
        }
        __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
        m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        m = _mm_max_ss(m, _mm_movehdup_ps(m));
        const float d = _mm_cvtss_f32(m) / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        __m256i q[4];
        for (int j = 0; j < 4; ++j) {
            const __m256 scaled = _mm256_mul_ps(v[j], _mm256_set1_ps(id));
            __m256 r = round_half_away(scaled);
            r = _mm256_min_ps(_mm256_max_ps(r, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
            r = _mm256_and_ps(r, _mm256_cmp_ps(scaled, scaled, _CMP_ORD_Q));  // NaN -> 0
            q[j] = _mm256_cvttps_epi32(r);
        }
        // packs interleave the 128-bit halves: (0-3, 8-11, 4-7, 12-15) per pair; the permute restores the order.
        const __m256i w01 = _mm256_packs_epi32(q[0], q[1]), w23 = _mm256_packs_epi32(q[2], q[3]);
        const __m256i bytes =
            _mm256_permutevar8x32_epi32(_mm256_packs_epi16(w01, w23), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(b[k].qs), bytes);
        quant::store_fp16(b[k].d, d);
    }
}

}  // namespace ember::cpu::detail

#include "cpu/avx2_region_end.h"
