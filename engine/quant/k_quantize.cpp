// SPDX-License-Identifier: MIT
// Quantizers for the K-quants (Ember's own; see k_fit.h) and for the activation type Q8_K.
//
// Every K-quant quantizer works the same way: fit each sub-block's scale (and minimum) by least squares, quantize
// those to the format's small integers under a super-block scale stored as fp16, then give every weight its
// nearest code under the scales as they will be decoded. Non-finite weights are treated as 0.
#include <algorithm>
#include <cmath>

#include "quant/formats.h"
#include "quant/k_fit.h"

namespace ember::quant::detail {

namespace {

using block::qk_k;

struct SuperBlock {
    float x[qk_k];  // finite copy of the weights
    float w[qk_k];  // importance of each weight
};

void load_super_block(const float* src, const float* imatrix, float sigma2, SuperBlock& sb) {
    for (int i = 0; i < qk_k; ++i) sb.x[i] = std::isfinite(src[i]) ? src[i] : 0.0f;
    importance_weights(sb.x, imatrix, sigma2, qk_k, sb.w);
}

int clamp_int(int v, int lo, int hi) { return std::clamp(v, lo, hi); }

// The super-block scale: `largest` (the sub-block value of largest magnitude) maps to `top`; returned as stored.
float super_scale(float largest, float top, uint8_t* out) {
    store_fp16(out, largest / top);
    return load_fp16(out);
}

float largest_magnitude(const float* v, int n) {
    float amax = 0, max = 0;
    for (int i = 0; i < n; ++i)
        if (std::fabs(v[i]) > amax) {
            amax = std::fabs(v[i]);
            max = v[i];
        }
    return max;
}

int scale_code(float value, float d, int lo, int hi) {
    return d != 0.0f ? clamp_int(nearest_int(value / d), lo, hi) : 0;
}

// Nearest code of x under y = scale * q - min, clamped to [lo, hi] (which always contains 0); 0 when the scale
// is 0.
int weight_code(float x, float scale, float min, int lo, int hi) {
    return scale != 0.0f ? clamp_int(nearest_int((x + min) / scale), lo, hi) : 0;
}

// Q2_K/Q4_K/Q5_K: affine sub-blocks of `sub` weights with scale and min codes in [0, scale_max].
struct AffineCodes {
    int scale[16];
    int min[16];
    float d, dmin;  // as stored
};

AffineCodes fit_affine_super_block(const SuperBlock& sb, int sub, int q_max, int scale_max, uint8_t* d_out,
                                   uint8_t* dmin_out) {
    const int n_sub = qk_k / sub;
    float scales[16], mins[16];
    for (int j = 0; j < n_sub; ++j) {
        const AffineFit f = fit_affine(sb.x + sub * j, sb.w + sub * j, sub, q_max);
        scales[j] = f.scale;
        mins[j] = f.min;
    }
    AffineCodes c{};
    c.d = super_scale(*std::max_element(scales, scales + n_sub), static_cast<float>(scale_max), d_out);
    c.dmin = super_scale(*std::max_element(mins, mins + n_sub), static_cast<float>(scale_max), dmin_out);
    for (int j = 0; j < n_sub; ++j) {
        c.scale[j] = scale_code(scales[j], c.d, 0, scale_max);
        c.min[j] = scale_code(mins[j], c.dmin, 0, scale_max);
    }
    return c;
}

// Q3_K/Q6_K: symmetric sub-blocks of 16 with signed scale codes in [-scale_neg, scale_neg - 1].
struct SymmetricCodes {
    int scale[16];
    float d;
};

SymmetricCodes fit_symmetric_super_block(const SuperBlock& sb, int q_neg, int q_pos, int scale_neg, uint8_t* d_out) {
    float scales[16];
    for (int j = 0; j < 16; ++j) scales[j] = fit_symmetric(sb.x + 16 * j, sb.w + 16 * j, 16, q_neg, q_pos);
    SymmetricCodes c{};
    c.d = super_scale(largest_magnitude(scales, 16), -static_cast<float>(scale_neg), d_out);
    for (int j = 0; j < 16; ++j) c.scale[j] = scale_code(scales[j], c.d, -scale_neg, scale_neg - 1);
    return c;
}

template <typename Block, typename Encode>
void quantize_super_blocks(const float* src, void* dst, int64_t n, const float* imatrix, Encode encode) {
    const float sigma2 = imatrix ? mean_square(src, n) : 0.0f;
    auto* b = static_cast<Block*>(dst);
    SuperBlock sb;
    for (int64_t k = 0; k < n / qk_k; ++k) {
        load_super_block(src + k * qk_k, imatrix ? imatrix + k * qk_k : nullptr, sigma2, sb);
        std::memset(&b[k], 0, sizeof(Block));
        encode(sb, b[k]);
    }
}

}  // namespace

void q2_k_quantize(const float* src, void* dst, int64_t n, const float* imatrix) {
    quantize_super_blocks<block::Q2_K>(src, dst, n, imatrix, [](const SuperBlock& sb, block::Q2_K& b) {
        const AffineCodes c = fit_affine_super_block(sb, 16, 3, 15, b.d, b.dmin);
        for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<uint8_t>(c.scale[j] | (c.min[j] << 4));
        for (int i = 0; i < qk_k; ++i) {
            const int j = i / 16;
            const int q = weight_code(sb.x[i], c.d * static_cast<float>(c.scale[j]),
                                      c.dmin * static_cast<float>(c.min[j]), 0, 3);
            b.qs[32 * (i / 128) + i % 32] |= static_cast<uint8_t>(q << (2 * ((i % 128) / 32)));
        }
    });
}

void q3_k_quantize(const float* src, void* dst, int64_t n, const float* imatrix) {
    quantize_super_blocks<block::Q3_K>(src, dst, n, imatrix, [](const SuperBlock& sb, block::Q3_K& b) {
        const SymmetricCodes c = fit_symmetric_super_block(sb, 4, 3, 32, b.d);
        for (int j = 0; j < 16; ++j) {
            const int v = c.scale[j] + 32;
            b.scales[j < 8 ? j : j - 8] |= static_cast<uint8_t>((v & 0x0f) << (j < 8 ? 0 : 4));
            b.scales[8 + (j & 3)] |= static_cast<uint8_t>((v >> 4) << (2 * (j >> 2)));
        }
        for (int i = 0; i < qk_k; ++i) {
            const int u = weight_code(sb.x[i], c.d * static_cast<float>(c.scale[i / 16]), 0.0f, -4, 3) + 4;
            b.qs[32 * (i / 128) + i % 32] |= static_cast<uint8_t>((u & 3) << (2 * ((i % 128) / 32)));
            b.hmask[i % 32] |= static_cast<uint8_t>((u >> 2) << (i / 32));
        }
    });
}

namespace {

void pack_k4_scales(const AffineCodes& c, uint8_t* scales) {
    for (int j = 0; j < 8; ++j) {
        const int sc = c.scale[j], mn = c.min[j];
        if (j < 4) {
            scales[j] |= static_cast<uint8_t>(sc & 63);
            scales[j + 4] |= static_cast<uint8_t>(mn & 63);
        } else {
            scales[j + 4] = static_cast<uint8_t>((sc & 0x0f) | ((mn & 0x0f) << 4));
            scales[j - 4] |= static_cast<uint8_t>((sc >> 4) << 6);
            scales[j] |= static_cast<uint8_t>((mn >> 4) << 6);
        }
    }
}

// Q4_K (codes 0..15) and Q5_K (0..31, the fifth bit in qh).
template <typename Block>
void k4_quantize(const float* src, void* dst, int64_t n, const float* imatrix) {
    constexpr bool has_high_bits = requires(Block b) { b.qh; };
    constexpr int top = has_high_bits ? 31 : 15;
    quantize_super_blocks<Block>(src, dst, n, imatrix, [](const SuperBlock& sb, Block& b) {
        const AffineCodes c = fit_affine_super_block(sb, 32, top, 63, b.d, b.dmin);
        pack_k4_scales(c, b.scales);
        for (int i = 0; i < qk_k; ++i) {
            const int s = i / 32;
            const int q = weight_code(sb.x[i], c.d * static_cast<float>(c.scale[s]),
                                      c.dmin * static_cast<float>(c.min[s]), 0, top);
            b.qs[32 * (s / 2) + i % 32] |= static_cast<uint8_t>((q & 0x0f) << (4 * (s & 1)));
            if constexpr (has_high_bits) b.qh[i % 32] |= static_cast<uint8_t>((q >> 4) << s);
        }
    });
}

}  // namespace

void q4_k_quantize(const float* src, void* dst, int64_t n, const float* imatrix) {
    k4_quantize<block::Q4_K>(src, dst, n, imatrix);
}

void q5_k_quantize(const float* src, void* dst, int64_t n, const float* imatrix) {
    k4_quantize<block::Q5_K>(src, dst, n, imatrix);
}

void q6_k_quantize(const float* src, void* dst, int64_t n, const float* imatrix) {
    quantize_super_blocks<block::Q6_K>(src, dst, n, imatrix, [](const SuperBlock& sb, block::Q6_K& b) {
        const SymmetricCodes c = fit_symmetric_super_block(sb, 32, 31, 128, b.d);
        for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<int8_t>(c.scale[j]);
        for (int i = 0; i < qk_k; ++i) {
            const int u = weight_code(sb.x[i], c.d * static_cast<float>(c.scale[i / 16]), 0.0f, -32, 31) + 32;
            const int h = i / 128, r = i % 128;
            b.ql[64 * h + r % 64] |= static_cast<uint8_t>((u & 0x0f) << (4 * (r / 64)));
            b.qh[32 * h + r % 32] |= static_cast<uint8_t>((u >> 4) << (2 * (r / 32)));
        }
    });
}

// Q8_K (activations): the value of largest magnitude maps to -128; NaN or infinity anywhere makes d NaN, so that
// a dot product with the block is NaN rather than silently finite.
void q8_k_quantize(const float* src, void* dst, int64_t n, const float*) {
    auto* b = static_cast<block::Q8_K*>(dst);
    for (int64_t k = 0; k < n / qk_k; ++k, src += qk_k) {
        float amax = 0, max = 0;
        bool finite = true;
        for (int i = 0; i < qk_k; ++i) {
            finite = finite && std::isfinite(src[i]);
            if (std::fabs(src[i]) > amax) {
                amax = std::fabs(src[i]);
                max = src[i];
            }
        }
        float d = 0.0f;
        if (!finite) {
            d = NAN;
            std::memset(b[k].qs, 0, sizeof b[k].qs);
        } else if (amax == 0.0f) {
            std::memset(b[k].qs, 0, sizeof b[k].qs);
        } else {
            const float iscale = -128.0f / max;
            for (int i = 0; i < qk_k; ++i) b[k].qs[i] = static_cast<int8_t>(std::min(127, nearest_int(iscale * src[i])));
            d = 1.0f / iscale;
        }
        std::memcpy(b[k].d, &d, 4);
        for (int s = 0; s < qk_k / 16; ++s) {
            int sum = 0;
            for (int i = 0; i < 16; ++i) sum += b[k].qs[16 * s + i];
            const auto stored = static_cast<int16_t>(sum);
            std::memcpy(b[k].bsums + 2 * s, &stored, 2);
        }
    }
}

}  // namespace ember::quant::detail
