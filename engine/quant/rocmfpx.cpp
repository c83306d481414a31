// SPDX-License-Identifier: MIT
// The ROCmFPX siblings of ROCmFP4 (../shared/specs/rocmfp4.md §5): FP3 (Q3_0_ROCMFPX, 14-byte blocks), FP6
// (Q6_0_ROCMFPX, 26 bytes) and FP8 (Q8_0_ROCMFPX, 33 bytes), on the same half-scale UE4M3 bytes. FP3 and FP6 have
// a scale per 16 weights and LSB-first bit streams; FP8 has one scale and int8 codes. Built with -ffp-contract=off.
#include <algorithm>

#include "quant/formats.h"
#include "quant/scale_search.h"

namespace ember::quant::detail {

namespace {

using block::qk;

uint32_t get_bits(const uint8_t* stream, int pos, int width) {
    uint32_t v = 0;
    for (int b = 0; b < width; ++b) v |= static_cast<uint32_t>((stream[(pos + b) / 8] >> ((pos + b) % 8)) & 1) << b;
    return v;
}

void put_bits(uint8_t* stream, int pos, int width, uint32_t v) {
    for (int b = 0; b < width; ++b)
        stream[(pos + b) / 8] |= static_cast<uint8_t>(((v >> b) & 1) << ((pos + b) % 8));
}

// lroundf(x / s) clamped to [lo, hi]; the clamp comes first so that no conversion overflows.
int round_clamped(float x, float s, int lo, int hi) {
    const float v = std::clamp(x / s, static_cast<float>(lo), static_cast<float>(hi));
    return static_cast<int>(std::round(v));
}

struct Fp3Codec {
    static constexpr float start_divisor = 4.0f;
    static float top(float) { return 4.0f; }
    static uint8_t encode(float x, float, float inv) {  // thresholds 0.5, 1.5, 3.0, inclusive
        if (!std::isfinite(x)) return 0;
        const float a = std::fabs(x * inv);
        const int m = (a > 0.5f) + (a > 1.5f) + (a > 3.0f);
        return static_cast<uint8_t>(m != 0 && x < 0.0f ? 4 | m : m);
    }
    static float value(uint8_t code) { return static_cast<float>(kRocmfp3Values[code]); }
};

struct Fp6Codec {
    static constexpr float start_divisor = 31.0f;
    static float top(float x) { return x < 0.0f ? 32.0f : 31.0f; }
    static uint8_t encode(float x, float s, float) {
        if (!std::isfinite(x)) return 0;
        const int v = round_clamped(x, s, -32, 31);
        if (v >= 0) return static_cast<uint8_t>(v);
        return static_cast<uint8_t>(v == -32 ? 32 : (32 | -v));
    }
    static float value(uint8_t code) { return static_cast<float>(rocmfp6_value(code)); }
};

struct Fp8Codec {
    static constexpr float start_divisor = 127.0f;
    static float top(float) { return 127.0f; }
    static uint8_t encode(float x, float s, float) {
        if (!std::isfinite(x)) return 0;
        return static_cast<uint8_t>(static_cast<int8_t>(round_clamped(x, s, -127, 127)));
    }
    static float value(uint8_t code) { return static_cast<float>(static_cast<int8_t>(code)); }
};

// Dual-scale bit-stream blocks (FP3, FP6): scale byte and codes of each 16-weight half.
template <typename Codec, typename Block, int Bits>
void quantize_bitstream_row(const float* x, void* dst, int64_t n, const float* imatrix) {
    auto* b = static_cast<Block*>(dst);
    const float sigma2 = imatrix ? rocmfp_sigma2(x, n) : 0.0f;
    for (int64_t k = 0; k < n / qk; ++k) {
        std::memset(&b[k], 0, sizeof(Block));
        for (int half = 0; half < 2; ++half) {
            const float* xs = x + k * qk + 16 * half;
            float w[16];
            if (imatrix) rocmfp_importance(xs, imatrix + k * qk + 16 * half, 16, sigma2, w);
            const int e = choose_scale_byte<Codec>(xs, imatrix ? w : nullptr, 16);
            uint8_t codes[16];
            encode_sub_block<Codec>(xs, 16, e, codes);
            b[k].e[half] = static_cast<uint8_t>(e);
            for (int i = 0; i < 16; ++i) put_bits(b[k].qs, Bits * (16 * half + i), Bits, codes[i]);
        }
    }
}

template <typename Codec, typename Block, int Bits>
void dequantize_bitstream(const void* src, float* dst, int64_t n_blocks) {
    const auto* b = static_cast<const Block*>(src);
    for (int64_t k = 0; k < n_blocks; ++k, dst += qk) {
        const float s0 = rocmfp_scale(b[k].e[0]);
        const float s1 = rocmfp_scale(b[k].e[1]);
        for (int i = 0; i < qk; ++i)
            dst[i] = Codec::value(static_cast<uint8_t>(get_bits(b[k].qs, Bits * i, Bits))) * (i < 16 ? s0 : s1);
    }
}

template <typename Block>
void validate_dual(const void* src, int64_t n_blocks) {
    const auto* b = static_cast<const Block*>(src);
    for (int64_t k = 0; k < n_blocks; ++k) {
        check_rocmfp_scale_byte(k, b[k].e[0]);
        check_rocmfp_scale_byte(k, b[k].e[1]);
    }
}

}  // namespace

void rocmfp3_dequantize(const void* src, float* dst, int64_t n_blocks) {
    dequantize_bitstream<Fp3Codec, block::Q3_0_ROCMFPX, 3>(src, dst, n_blocks);
}
void rocmfp3_quantize(const float* x, void* dst, int64_t n, const float* imatrix) {
    quantize_bitstream_row<Fp3Codec, block::Q3_0_ROCMFPX, 3>(x, dst, n, imatrix);
}
void rocmfp3_validate(const void* src, int64_t n_blocks) { validate_dual<block::Q3_0_ROCMFPX>(src, n_blocks); }

void rocmfp6_dequantize(const void* src, float* dst, int64_t n_blocks) {
    dequantize_bitstream<Fp6Codec, block::Q6_0_ROCMFPX, 6>(src, dst, n_blocks);
}
void rocmfp6_quantize(const float* x, void* dst, int64_t n, const float* imatrix) {
    quantize_bitstream_row<Fp6Codec, block::Q6_0_ROCMFPX, 6>(x, dst, n, imatrix);
}
void rocmfp6_validate(const void* src, int64_t n_blocks) { validate_dual<block::Q6_0_ROCMFPX>(src, n_blocks); }

void rocmfp8_dequantize(const void* src, float* dst, int64_t n_blocks) {
    const auto* b = static_cast<const block::Q8_0_ROCMFPX*>(src);
    for (int64_t k = 0; k < n_blocks; ++k, dst += qk) {
        const float s = rocmfp_scale(b[k].e);
        for (int i = 0; i < qk; ++i) dst[i] = static_cast<float>(b[k].qs[i]) * s;
    }
}

// Without an imatrix the byte is the one nearest to max / 127 (no search); with one, the weighted MSE search.
void rocmfp8_quantize(const float* x, void* dst, int64_t n, const float* imatrix) {
    auto* b = static_cast<block::Q8_0_ROCMFPX*>(dst);
    const float sigma2 = imatrix ? rocmfp_sigma2(x, n) : 0.0f;
    for (int64_t k = 0; k < n / qk; ++k) {
        const float* xs = x + k * qk;
        int e;
        if (imatrix) {
            float w[qk];
            rocmfp_importance(xs, imatrix + k * qk, qk, sigma2, w);
            e = choose_scale_byte<Fp8Codec>(xs, w, qk);
        } else {
            float max = 0.0f;
            bool finite = true;
            for (int i = 0; i < qk; ++i) {
                finite = finite && std::isfinite(xs[i]);
                max = std::max(max, std::fabs(xs[i]));
            }
            e = finite && max > 0.0f ? nearest_scale_byte(max / Fp8Codec::start_divisor) : 0;
        }
        uint8_t codes[qk];
        encode_sub_block<Fp8Codec>(xs, qk, e, codes);
        b[k].e = static_cast<uint8_t>(e);
        std::memcpy(b[k].qs, codes, qk);
    }
}

void rocmfp8_validate(const void* src, int64_t n_blocks) {
    const auto* b = static_cast<const block::Q8_0_ROCMFPX*>(src);
    for (int64_t k = 0; k < n_blocks; ++k) check_rocmfp_scale_byte(k, b[k].e);
}

}  // namespace ember::quant::detail
