// SPDX-License-Identifier: MIT
// AVX2 kernels for the 32-weight types against Q8_0 activations. Each weight block is decoded once into 32 int8
// codes and a per-lane scale vector (lanes 0-3 cover weights 0-15, lanes 4-7 weights 16-31, which is what the
// dual-scale types need), then dotted with every activation row of the tile: |w| x sign(a, w) byte products summed
// to eight int32 (byte_dot: maddubs + madd, or one vpdpbusd where dot_avxvnni_blocks.cpp builds this file for
// AVX-VNNI), converted and fused-multiply-added with scale * d_y.
#include "cpu/dot_kernels.h"
#include "cpu/avx2_common.h"  // last: opens the AVX2 region

namespace ember::cpu::detail {

namespace {

using avx2::fp16;

struct Decoded {
    __m256i q;      // 32 codes as int8 (uint8 for the types with a minimum)
    __m256 scale;   // per int32 lane of the products
    float min = 0;  // Q4_1/Q5_1: the block minimum
};

// Weights 0-15 from the low nibbles, 16-31 from the high ones: the 16 bytes in both lanes (one broadcast load), the
// high lane's words shifted down by 4.
__m256i nibbles(const uint8_t* qs) {
    const __m256i packed = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)));
    return _mm256_and_si256(_mm256_srlv_epi32(packed, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)),
                            _mm256_set1_epi8(0x0f));
}

// A block's two adjacent fp16 values (d, then m) converted together.
__m128 fp16_pair(const uint8_t* p) {
    uint32_t bits;
    std::memcpy(&bits, p, sizeof bits);
    return _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(bits)));
}

__m256i fifth_bits(const uint8_t* qh) {  // byte i = 0x10 where bit i of qh is set
    uint32_t bits;
    std::memcpy(&bits, qh, 4);
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32(static_cast<int>(bits)),
        _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i select = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, select), select), _mm256_set1_epi8(0x10));
}

__m256i lookup(const int8_t* table16, __m256i codes) {
    const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(table16));
    return _mm256_shuffle_epi8(_mm256_set_m128i(t, t), codes);
}

// The eight int32 sums of four byte products each, unsigned u times signed s (no pair of products saturates
// int16 here: |u| <= 128 and |s| <= 127), so vpdpbusd gives the same sums as maddubs + madd.
__m256i byte_dot(__m256i u, __m256i s) {
#if defined(EMBER_CPU_AVXVNNI)
    return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s);
#else
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}

__m256 two_scales(float s0, float s1) { return _mm256_set_m128(_mm_set1_ps(s1), _mm_set1_ps(s0)); }

struct Q4_0 {
    using Block = block::Q4_0;
    static constexpr bool kUnsigned = false;
    static Decoded decode(const Block& b) {
        return {_mm256_sub_epi8(nibbles(b.qs), _mm256_set1_epi8(8)), _mm256_set1_ps(fp16(b.d))};
    }
};

struct Q4_1 {
    using Block = block::Q4_1;
    static constexpr bool kUnsigned = true;
    static Decoded decode(const Block& b) {
        const __m128 dm = fp16_pair(b.d);
        return {nibbles(b.qs), _mm256_broadcastss_ps(dm), _mm_cvtss_f32(_mm_movehdup_ps(dm))};
    }
};

struct Q5_0 {
    using Block = block::Q5_0;
    static constexpr bool kUnsigned = false;
    static Decoded decode(const Block& b) {
        const __m256i q = _mm256_or_si256(nibbles(b.qs), fifth_bits(b.qh));
        return {_mm256_sub_epi8(q, _mm256_set1_epi8(16)), _mm256_set1_ps(fp16(b.d))};
    }
};

struct Q5_1 {
    using Block = block::Q5_1;
    static constexpr bool kUnsigned = true;
    static Decoded decode(const Block& b) {
        const __m128 dm = fp16_pair(b.d);
        return {_mm256_or_si256(nibbles(b.qs), fifth_bits(b.qh)), _mm256_broadcastss_ps(dm),
                _mm_cvtss_f32(_mm_movehdup_ps(dm))};
    }
};

struct Q8_0 {
    using Block = block::Q8_0;
    static constexpr bool kUnsigned = false;
    static Decoded decode(const Block& b) {
        return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)), _mm256_set1_ps(fp16(b.d))};
    }
};

struct Mxfp4 {
    using Block = block::MXFP4;
    static constexpr bool kUnsigned = false;
    static Decoded decode(const Block& b) {
        return {lookup(quant::kMxfp4Values, nibbles(b.qs)), _mm256_set1_ps(quant::mxfp4_scale(b.e))};
    }
};

struct RocmFp4 {
    using Block = block::Q4_0_ROCMFP4;
    static constexpr bool kUnsigned = false;
    static Decoded decode(const Block& b) {
        return {lookup(quant::kRocmfp4Values, nibbles(b.qs)),
                two_scales(avx2::kRocmfpScales[b.e[0]], avx2::kRocmfpScales[b.e[1]])};
    }
};

struct RocmFp4Fast {
    using Block = block::Q4_0_ROCMFP4_FAST;
    static constexpr bool kUnsigned = false;
    static Decoded decode(const Block& b) {
        return {lookup(quant::kRocmfp4Values, nibbles(b.qs)), _mm256_set1_ps(avx2::kRocmfpScales[b.e])};
    }
};

// FP6: every 3 bytes hold 4 codes. Each 32-bit lane gathers one 3-byte group and spreads its codes to 4 bytes.
struct RocmFp6 {
    using Block = block::Q6_0_ROCMFPX;
    static constexpr bool kUnsigned = false;
    static Decoded decode(const Block& b) {
        // Low lane: bytes 0-11 (weights 0-15), loaded from offset 0; high lane: bytes 12-23, loaded from offset 8
        // so that the load stays inside the 26-byte block.
        const __m256i raw = _mm256_set_m128i(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs + 8)),
                                             _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs)));
        const __m256i groups = _mm256_shuffle_epi8(
            raw, _mm256_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1,  //
                                  4, 5, 6, -1, 7, 8, 9, -1, 10, 11, 12, -1, 13, 14, 15, -1));
        const __m256i m = _mm256_set1_epi32(0x3f);
        const __m256i codes = _mm256_or_si256(
            _mm256_or_si256(_mm256_and_si256(groups, m), _mm256_and_si256(_mm256_slli_epi32(groups, 2), _mm256_slli_epi32(m, 8))),
            _mm256_or_si256(_mm256_and_si256(_mm256_slli_epi32(groups, 4), _mm256_slli_epi32(m, 16)),
                            _mm256_and_si256(_mm256_slli_epi32(groups, 6), _mm256_slli_epi32(m, 24))));
        // Sign bit 5, magnitude bits 0-4; "sign set, magnitude 0" (code 32) is -32.
        const __m256i bit5 = _mm256_set1_epi8(32);
        const __m256i negative = _mm256_cmpeq_epi8(_mm256_and_si256(codes, bit5), bit5);
        const __m256i magnitude = _mm256_or_si256(_mm256_and_si256(codes, _mm256_set1_epi8(31)),
                                                  _mm256_and_si256(_mm256_cmpeq_epi8(codes, bit5), bit5));
        const __m256i q = _mm256_sign_epi8(magnitude, _mm256_or_si256(negative, _mm256_set1_epi8(1)));
        return {q, two_scales(avx2::kRocmfpScales[b.e[0]], avx2::kRocmfpScales[b.e[1]])};
    }
};

// FP3: weight w's code is bits 3w..3w+2 of the 96-bit stream. Each 16-bit lane picks the two bytes holding its
// code (pshufb), a multiply by 2^(13 - 3w mod 8) moves the code to the top 3 bits, a shift brings it down.
struct RocmFp3 {
    static constexpr int8_t kFp3Table[16] = {quant::kRocmfp3Values[0], quant::kRocmfp3Values[1], quant::kRocmfp3Values[2],
                                             quant::kRocmfp3Values[3], quant::kRocmfp3Values[4], quant::kRocmfp3Values[5],
                                             quant::kRocmfp3Values[6], quant::kRocmfp3Values[7]};  // pshufb needs 16
    using Block = block::Q3_0_ROCMFPX;
    static constexpr bool kUnsigned = false;
    static Decoded decode(const Block& b) {
        uint32_t tail;
        std::memcpy(&tail, b.qs + 8, 4);
        const __m128i src = _mm_insert_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b.qs)),
                                             static_cast<int>(tail), 2);  // bytes 0-11, nothing past the codes
        const __m256i both = _mm256_set_m128i(src, src);
        const __m256i pick = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 1, 2, 1, 2, 1, 2, 2, 3, 2, 3,  //
                                              3, 4, 3, 4, 3, 4, 4, 5, 4, 5, 4, 5, 5, 6, 5, 6);
        const __m256i align = _mm256_setr_epi16(8192, 1024, 128, 4096, 512, 64, 2048, 256,  //
                                                8192, 1024, 128, 4096, 512, 64, 2048, 256);
        const __m256i first = _mm256_srli_epi16(_mm256_mullo_epi16(_mm256_shuffle_epi8(both, pick), align), 13);
        const __m256i second = _mm256_srli_epi16(
            _mm256_mullo_epi16(_mm256_shuffle_epi8(both, _mm256_add_epi8(pick, _mm256_set1_epi8(6))), align), 13);
        // packus interleaves 128-bit halves: (0-7, 16-23, 8-15, 24-31); the permute restores weight order.
        const __m256i codes = _mm256_permute4x64_epi64(_mm256_packus_epi16(first, second), 0xD8);
        return {lookup(kFp3Table, codes),
                two_scales(avx2::kRocmfpScales[b.e[0]], avx2::kRocmfpScales[b.e[1]])};
    }
};

struct RocmFp8 {
    using Block = block::Q8_0_ROCMFPX;
    static constexpr bool kUnsigned = false;
    static Decoded decode(const Block& b) {
        return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)), _mm256_set1_ps(avx2::kRocmfpScales[b.e])};
    }
};

template <typename Fmt, int T>
void tile(const void* w_row, const std::byte* act, int64_t act_stride, int64_t cols, float* out) {
    constexpr bool kMin = Fmt::kUnsigned;
    const auto* w = static_cast<const typename Fmt::Block*>(w_row);
    __m256 acc[T];
    float min_sum[T];  // kMin: the block minimums times the activation blocks' sums (carries_block_sums)
    for (int t = 0; t < T; ++t) {
        acc[t] = _mm256_setzero_ps();
        min_sum[t] = 0.0f;
    }
    for (int64_t k = 0; k < cols / 32; ++k) {
        avx2::prefetch_ahead(w + k);
        const Decoded d = Fmt::decode(w[k]);
        const __m256i abs_q = kMin ? d.q : _mm256_sign_epi8(d.q, d.q);
        for (int t = 0; t < T; ++t) {
            const auto& a = reinterpret_cast<const block::Q8_0*>(act + t * act_stride)[k];
            const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.qs));
            const __m256 sums = _mm256_cvtepi32_ps(byte_dot(abs_q, kMin ? av : _mm256_sign_epi8(av, d.q)));
            const float dy = block_scale(act + t * act_stride, cols, k);  // a.d as a float (write_block_extras)
            acc[t] = _mm256_fmadd_ps(sums, _mm256_mul_ps(d.scale, _mm256_set1_ps(dy)), acc[t]);
            if constexpr (kMin) min_sum[t] += d.min * block_sum(act + t * act_stride, cols, k);
        }
    }
    for (int t = 0; t < T; ++t) out[t] = avx2::hsum(acc[t]) + min_sum[t];
}

template <typename Fmt>
void tile_any(const void* w_row, const std::byte* act, size_t act_stride, int n_act, int64_t cols, float* out) {
    with_tile_width(n_act, [&](auto width) {
        tile<Fmt, decltype(width)::value>(w_row, act, static_cast<int64_t>(act_stride), cols, out);
    });
}

constexpr Kernel kAvx2BlockKernels[] = {
    {TT::Q4_0, Isa::avx2, tile_any<Q4_0>},
    {TT::Q4_1, Isa::avx2, tile_any<Q4_1>},
    {TT::Q5_0, Isa::avx2, tile_any<Q5_0>},
    {TT::Q5_1, Isa::avx2, tile_any<Q5_1>},
    {TT::Q8_0, Isa::avx2, tile_any<Q8_0>},
    {TT::MXFP4, Isa::avx2, tile_any<Mxfp4>},
    {TT::Q4_0_ROCMFP4, Isa::avx2, tile_any<RocmFp4>},
    {TT::Q4_0_ROCMFP4_FAST, Isa::avx2, tile_any<RocmFp4Fast>},
    {TT::Q6_0_ROCMFPX, Isa::avx2, tile_any<RocmFp6>},
    {TT::Q8_0_ROCMFPX, Isa::avx2, tile_any<RocmFp8>},
    {TT::Q3_0_ROCMFPX, Isa::avx2, tile_any<RocmFp3>},
};

}  // namespace

#if defined(EMBER_CPU_AVXVNNI)
const Kernel* avxvnni_block_kernel(gguf::TensorType type) {
#else
const Kernel* avx2_block_kernel(gguf::TensorType type) {
#endif
    return find_kernel(kAvx2BlockKernels, type);
}

}  // namespace ember::cpu::detail

#include "cpu/avx2_region_end.h"
