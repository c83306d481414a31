// SPDX-License-Identifier: MIT
// Opens the AVX2 region of an AVX2 kernel file: every function defined after this header, up to
// avx2_region_end.h, is compiled for AVX2 + FMA + F16C; everything included before it stays baseline x86-64.
// (Building whole files with -mavx2 would also compile the inline functions of shared headers for AVX2, and the
// linker may keep that copy for the scalar path too, which then faults on a CPU without AVX2.)
// Include it last, after every other header, and only from the AVX2 kernel files.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "quant/quant.h"

// EMBER_CPU_AVXVNNI (dot_avxvnni_blocks.cpp): the region also has AVX-VNNI, and the helpers below take another inline
// namespace, so that no copy built for it can stand in for the AVX2 one.
#if defined(EMBER_CPU_AVXVNNI)
#define EMBER_CPU_HELPERS with_avxvnni
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c,avxvnni"))), apply_to = function)
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avxvnni")
#endif
#else
#define EMBER_CPU_HELPERS plain_avx2
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#endif
#endif

#include <immintrin.h>

namespace ember::cpu::detail::avx2 {
inline namespace EMBER_CPU_HELPERS {

// How far ahead of the weights in use a tile loop asks for the next ones. The hardware prefetchers alone left a
// decode's mat x vec waiting on memory (SmolLM2-135M Q4_1, 2 threads: 70 tok/s without, 140 at 1 KiB ahead, about
// 170 from 4 KiB on, flat to 16 KiB): they stop at page boundaries, and a row range crosses many.
inline constexpr size_t kPrefetchBytes = 4096;
inline void prefetch_ahead(const void* p) {
    _mm_prefetch(static_cast<const char*>(p) + kPrefetchBytes, _MM_HINT_T0);
}

inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

inline int hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

inline float fp16(const uint8_t* p) { return _cvtsh_ss(quant::load_u16(p)); }

// The ROCmFP4/ROCmFPX scale of every byte, as a table.
inline constexpr std::array<float, 256> kRocmfpScales = [] {
    std::array<float, 256> t{};
    for (int e = 0; e < 256; ++e) t[static_cast<size_t>(e)] = quant::rocmfp_scale(static_cast<uint8_t>(e));
    return t;
}();

}  // namespace EMBER_CPU_HELPERS
}  // namespace ember::cpu::detail::avx2
