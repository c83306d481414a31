// SPDX-License-Identifier: MIT
// AVX2 kernels for the K-quants against Q8_K activations. Each super-block is unpacked once into 256 unsigned
// codes (the signed types biased by 4 or 32) and 16 int16 sub-block scales; per activation row the byte products
// (maddubs) are weighted by the scales (madd) into int32, the bias is removed with the activation block sums, and
// the float contribution is the scalar kernel's (scalar_kernels.h): the integers are equal, so the results are.
#include "cpu/dot_kernels.h"
#include "cpu/scalar_kernels.h"
#include "cpu/avx2_common.h"  // last: opens the AVX2 region

namespace ember::cpu::detail {

namespace {

using avx2::fp16;

struct Unpacked {
    alignas(32) uint8_t u[256];   // codes + bias, 0..63
    alignas(32) int16_t sc[16];   // scale of each 16-weight group
    alignas(32) int16_t mins[16]; // minimum of each 16-weight group (types with minimums)
    int bias = 0;                 // code offset: q = u - bias
    float d = 0, dmin = 0;
};

__m256i load(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
void store(uint8_t* p, __m256i v) { _mm256_store_si256(reinterpret_cast<__m256i*>(p), v); }
__m256i bits(__m256i v, int shift, int mask) {  // (v >> shift) & mask in every byte
    return _mm256_and_si256(_mm256_srli_epi16(v, shift), _mm256_set1_epi8(static_cast<char>(mask)));
}

// The Q2_K/Q3_K low 2 bits: weight 128h + 32j + l at bits 2j of qs[32h + l].
void unpack_low2(const uint8_t* qs, uint8_t* u) {
    for (int h = 0; h < 2; ++h) {
        const __m256i v = load(qs + 32 * h);
        for (int j = 0; j < 4; ++j) store(u + 128 * h + 32 * j, bits(v, 2 * j, 3));
    }
}

void unpack(const block::Q2_K& b, Unpacked& p) {
    unpack_low2(b.qs, p.u);
    for (int j = 0; j < 16; ++j) {
        p.sc[j] = static_cast<int16_t>(b.scales[j] & 0x0f);
        p.mins[j] = static_cast<int16_t>(b.scales[j] >> 4);
    }
    p.d = fp16(b.d);
    p.dmin = fp16(b.dmin);
}

void unpack(const block::Q3_K& b, Unpacked& p) {
    unpack_low2(b.qs, p.u);
    const __m256i hmask = load(b.hmask);
    for (int g = 0; g < 8; ++g) {
        const __m256i high = _mm256_slli_epi16(bits(hmask, g, 1), 2);
        store(p.u + 32 * g, _mm256_or_si256(load(p.u + 32 * g), high));
    }
    for (int j = 0; j < 16; ++j) p.sc[j] = static_cast<int16_t>(quant::q3_k_scale(b.scales, j));
    p.bias = 4;
    p.d = fp16(b.d);
}

template <typename Block>
void unpack_k4(const Block& b, Unpacked& p) {
    for (int g = 0; g < 4; ++g) {
        const __m256i v = load(b.qs + 32 * g);
        store(p.u + 64 * g, bits(v, 0, 0x0f));
        store(p.u + 64 * g + 32, bits(v, 4, 0x0f));
    }
    for (int s = 0; s < 8; ++s) {
        uint8_t sc, m;
        quant::k4_scale_min(b.scales, s, sc, m);
        p.sc[2 * s] = p.sc[2 * s + 1] = sc;
        p.mins[2 * s] = p.mins[2 * s + 1] = m;
    }
    p.d = fp16(b.d);
    p.dmin = fp16(b.dmin);
}

void unpack(const block::Q4_K& b, Unpacked& p) { unpack_k4(b, p); }

void unpack(const block::Q5_K& b, Unpacked& p) {
    unpack_k4(b, p);
    const __m256i qh = load(b.qh);
    for (int s = 0; s < 8; ++s) {
        const __m256i high = _mm256_slli_epi16(bits(qh, s, 1), 4);
        store(p.u + 32 * s, _mm256_or_si256(load(p.u + 32 * s), high));
    }
}

void unpack(const block::Q6_K& b, Unpacked& p) {
    for (int h = 0; h < 2; ++h) {
        const __m256i high = load(b.qh + 32 * h);
        for (int j = 0; j < 4; ++j) {
            const __m256i low = bits(load(b.ql + 64 * h + 32 * (j % 2)), 4 * (j / 2), 0x0f);
            store(p.u + 128 * h + 32 * j, _mm256_or_si256(low, _mm256_slli_epi16(bits(high, 2 * j, 3), 4)));
        }
    }
    for (int j = 0; j < 16; ++j) p.sc[j] = b.scales[j];
    p.bias = 32;
    p.d = fp16(b.d);
}

template <typename Block, bool kMins>
float contribution(const Unpacked& p, const block::Q8_K& a) {
    __m256i acc = _mm256_setzero_si256();
    for (int g = 0; g < 8; ++g) {
        const __m256i products = _mm256_maddubs_epi16(load(p.u + 32 * g), load(reinterpret_cast<const uint8_t*>(a.qs) + 32 * g));
        const __m256i scales = _mm256_set_m128i(_mm_set1_epi16(p.sc[2 * g + 1]), _mm_set1_epi16(p.sc[2 * g]));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(products, scales));
    }
    const __m256i bsums = load(a.bsums);
    int isum = avx2::hsum_i32(acc);
    if (p.bias) isum -= p.bias * avx2::hsum_i32(_mm256_madd_epi16(load(reinterpret_cast<const uint8_t*>(p.sc)), bsums));
    int msum = 0;
    if constexpr (kMins) msum = avx2::hsum_i32(_mm256_madd_epi16(load(reinterpret_cast<const uint8_t*>(p.mins)), bsums));
    return kquant_contribution(p.d, p.dmin, quant::load_f32(a.d), isum, msum);
}

template <typename Block, bool kMins, int T>
void tile(const void* w_row, const std::byte* act, int64_t act_stride, int64_t cols, float* out) {
    const auto* w = static_cast<const Block*>(w_row);
    float sum[T] = {};
    Unpacked p;
    for (int64_t k = 0; k < cols / block::qk_k; ++k) {
        avx2::prefetch_ahead(w + k);
        unpack(w[k], p);
        for (int t = 0; t < T; ++t)
            sum[t] += contribution<Block, kMins>(p, reinterpret_cast<const block::Q8_K*>(act + t * act_stride)[k]);
    }
    for (int t = 0; t < T; ++t) out[t] = sum[t];
}

template <typename Block, bool kMins>
void tile_any(const void* w_row, const std::byte* act, size_t act_stride, int n_act, int64_t cols, float* out) {
    with_tile_width(n_act, [&](auto width) {
        tile<Block, kMins, decltype(width)::value>(w_row, act, static_cast<int64_t>(act_stride), cols, out);
    });
}

constexpr Kernel kAvx2KQuantKernels[] = {
    {TT::Q2_K, Isa::avx2, tile_any<block::Q2_K, true>},
    {TT::Q3_K, Isa::avx2, tile_any<block::Q3_K, false>},
    {TT::Q4_K, Isa::avx2, tile_any<block::Q4_K, true>},
    {TT::Q5_K, Isa::avx2, tile_any<block::Q5_K, true>},
    {TT::Q6_K, Isa::avx2, tile_any<block::Q6_K, false>},
};

}  // namespace

const Kernel* avx2_kquant_kernel(gguf::TensorType type) {
    return find_kernel(kAvx2KQuantKernels, type);
}

}  // namespace ember::cpu::detail

#include "cpu/avx2_region_end.h"
