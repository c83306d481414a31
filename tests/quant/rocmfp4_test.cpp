// SPDX-License-Identifier: MIT
// ROCmFP4 and its siblings against ../shared/specs/rocmfp4.md: the worked example of §8, the scale table of §2.2,
// and the quantizer's properties checked exhaustively: the chosen byte minimises the fp32 squared error over all
// 126 bytes (ties to the smaller byte), the codes are the nearest ones, code 8 never appears, bytes <= 0x7E.
// Compiled with -ffp-contract=off, as the quantizer is: the error sums must round the same way.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "quant/quant.h"

namespace {

using ember::gguf::TensorType;
namespace q = ember::quant;

const std::vector<float> kExample = {0,     0.5,    -0.5,  1,      -1,     1.5,   -1.5, 2,    -2,   3,   -3,
                                     4,     -4,     5,     -5,     0.5,    0.125, -0.375, 1.25, -2.25, 2.5, -2.5,
                                     0.25,  -0.5,   0.75,  -1,     1.5,    -2,    0.3125, -1.0625, 1.625, 0};

std::vector<uint8_t> quantize(TensorType t, const std::vector<float>& x, const float* imatrix = nullptr) {
    std::vector<uint8_t> out(ember::gguf::row_bytes(t, static_cast<int64_t>(x.size())));
    q::quantize_row(t, x.data(), out.data(), static_cast<int64_t>(x.size()), imatrix);
    return out;
}

std::vector<float> dequantize(TensorType t, const std::vector<uint8_t>& blocks, size_t n) {
    std::vector<float> out(n);
    q::dequantize_row(t, blocks.data(), out.data(), static_cast<int64_t>(n));
    return out;
}

TEST(RocmFp4, ScaleBytesDecodeAsTheSpecTable) {
    EXPECT_EQ(q::rocmfp_scale(0x01), std::ldexp(1.0f, -10));
    EXPECT_EQ(q::rocmfp_scale(0x08), std::ldexp(1.0f, -7));
    EXPECT_EQ(q::rocmfp_scale(0x30), 0.25f);
    EXPECT_EQ(q::rocmfp_scale(0x38), 0.5f);
    EXPECT_EQ(q::rocmfp_scale(0x40), 1.0f);
    EXPECT_EQ(q::rocmfp_scale(0x7E), 224.0f);
    EXPECT_EQ(q::rocmfp_scale(0x00), 0.0f);
    EXPECT_EQ(q::rocmfp_scale(0x7F), 0.0f);
    for (int e = 0x80; e < 0x100; ++e) EXPECT_EQ(q::rocmfp_scale(static_cast<uint8_t>(e)), 0.0f);
    // Equivalently half the E4M3 value: (1 + M/8) * 2^(E - 7) / 2 for E >= 1.
    for (int e = 8; e < 0x7F; ++e)
        EXPECT_EQ(q::rocmfp_scale(static_cast<uint8_t>(e)), std::ldexp(1.0f + (e & 7) / 8.0f, ((e >> 3) & 15) - 8));
}

TEST(RocmFp4, WorkedExampleDualScale) {
    const std::vector<uint8_t> expected = {0x00, 0x91, 0x49, 0xE2, 0x7A, 0xF3, 0x1B, 0xA4, 0x3C,
                                           0xC5, 0x5D, 0xE6, 0x1E, 0xC7, 0x5F, 0x01, 0x38, 0x30};
    const std::vector<uint8_t> got = quantize(TensorType::Q4_0_ROCMFP4, kExample);
    EXPECT_EQ(got, expected);
    const std::vector<float> dequantized = {0,   0.5, -0.5, 1,    -1,   1.5,  -1.5, 2,    -2, 3,    -3,
                                            4,   -4,  5,    -5,   0.5,  0,    -0.25, 1,   -2, 2.5,  -2.5,
                                            0.25, -0.5, 0.75, -1, 1.5,  -2,   0.25, -1,   1.5, 0};
    EXPECT_EQ(dequantize(TensorType::Q4_0_ROCMFP4, expected, 32), dequantized);
}

TEST(RocmFp4, WorkedExampleFast) {
    const std::vector<uint8_t> expected = {0x00, 0x91, 0x29, 0xC2, 0x4A, 0xC3, 0x0B, 0x94, 0x1C,
                                           0xA5, 0x3D, 0xC6, 0x1E, 0xA7, 0x3F, 0x01, 0x38};
    EXPECT_EQ(quantize(TensorType::Q4_0_ROCMFP4_FAST, kExample), expected);
}

// --- An independent model of the spec's error function, for the exhaustive checks ------------------------------

int fp4_code(float x, float inv) {
    const float a = std::fabs(x * inv);
    const float limits[7] = {0.5f, 1.5f, 2.5f, 3.5f, 5.0f, 7.0f, 9.0f};
    int m = 7;
    for (int k = 0; k < 7; ++k)
        if (a <= limits[k]) {
            m = k;
            break;
        }
    return m == 0 ? 0 : (x < 0 ? 8 + m : m);
}

float fp4_error(const float* x, const float* w, int n, int e) {
    const float s = q::rocmfp_scale(static_cast<uint8_t>(e));
    const float inv = 1.0f / s;
    float err = 0.0f;
    for (int i = 0; i < n; ++i) {
        const float d = x[i] - static_cast<float>(q::kRocmfp4Values[fp4_code(x[i], inv)]) * s;
        err += w ? w[i] * (d * d) : d * d;
    }
    return err;
}

int argmin_byte(const float* x, const float* w, int n) {
    int best_e = 1;
    float best = fp4_error(x, w, n, 1);
    for (int e = 2; e <= 126; ++e) {
        const float err = fp4_error(x, w, n, e);
        if (err < best) {
            best = err;
            best_e = e;
        }
    }
    return best_e;
}

std::vector<float> random_row(std::mt19937& rng, int n) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> log_scale(-12.0f, 8.0f);
    std::uniform_int_distribution<int> kind(0, 5);
    std::vector<float> x(static_cast<size_t>(n));
    for (int b = 0; b < n / 16; ++b) {
        const float scale = std::exp2(log_scale(rng));
        const int k = kind(rng);
        for (int i = 0; i < 16; ++i) {
            float v = normal(rng) * scale;
            if (k == 0) v = std::round(v / scale * 4.0f) * 0.25f;  // a coarse grid: many exact threshold ties
            if (k == 1 && i == 3) v *= 30.0f;                      // one outlier
            x[static_cast<size_t>(16 * b + i)] = v;
        }
    }
    return x;
}

void check_fp4_properties(TensorType type, int sub, const std::vector<float>& x, const float* w) {
    const int n = static_cast<int>(x.size());
    const std::vector<uint8_t> blocks = quantize(type, x, w);
    const int bytes = type == TensorType::Q4_0_ROCMFP4 ? 18 : 17;
    std::vector<float> wts(x.size());
    if (w) {  // §4.3 weights, built independently here
        float sigma2 = 0.0f;
        for (float v : x) sigma2 += v * v;
        sigma2 /= static_cast<float>(n);
        for (int i = 0; i < n; ++i) wts[i] = w[i] > 0.0f ? w[i] * std::sqrt(sigma2 + x[i] * x[i]) : 0.0f;
    }
    for (int b = 0; b < n / 32; ++b) {
        const uint8_t* blk = blocks.data() + b * bytes;
        for (int j = 0; j < 16; ++j) {
            EXPECT_NE(blk[j] & 0x0f, 8) << "code 8 in block " << b;
            EXPECT_NE(blk[j] >> 4, 8) << "code 8 in block " << b;
        }
        for (int part = 0; part < 32 / sub; ++part) {
            const float* xs = x.data() + 32 * b + sub * part;
            const uint8_t e = blk[16 + part];
            ASSERT_LE(e, 0x7E);
            const int want = argmin_byte(xs, w ? wts.data() + 32 * b + sub * part : nullptr, sub);
            ASSERT_EQ(e, want) << "block " << b << " part " << part << ": error " << fp4_error(xs, nullptr, sub, e)
                               << " at the chosen byte vs " << fp4_error(xs, nullptr, sub, want);
            const float inv = 1.0f / q::rocmfp_scale(e);
            for (int i = 0; i < sub; ++i) {
                const int idx = sub * part + i;
                const int code = idx < 16 ? (blk[idx] & 0x0f) : (blk[idx - 16] >> 4);
                ASSERT_EQ(code, fp4_code(xs[i], inv)) << "weight " << 32 * b + idx;
            }
        }
    }
}

TEST(RocmFp4, DualScaleQuantizerIsTheExhaustiveArgmin) {
    std::mt19937 rng(1);
    for (int seed = 0; seed < 8; ++seed) check_fp4_properties(TensorType::Q4_0_ROCMFP4, 16, random_row(rng, 512), nullptr);
}

TEST(RocmFp4, FastQuantizerIsTheExhaustiveArgmin) {
    std::mt19937 rng(2);
    for (int seed = 0; seed < 8; ++seed)
        check_fp4_properties(TensorType::Q4_0_ROCMFP4_FAST, 32, random_row(rng, 512), nullptr);
}

TEST(RocmFp4, ImatrixQuantizerIsTheWeightedArgmin) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> importance(0.0f, 4.0f);
    for (int seed = 0; seed < 4; ++seed) {
        const std::vector<float> x = random_row(rng, 256);
        std::vector<float> im(x.size());
        for (float& v : im) v = importance(rng);
        im[5] = 0.0f;  // a weight that does not count
        check_fp4_properties(TensorType::Q4_0_ROCMFP4, 16, x, im.data());
        check_fp4_properties(TensorType::Q4_0_ROCMFP4_FAST, 32, x, im.data());
    }
}

TEST(RocmFp4, ImatrixLowersTheWeightedError) {
    std::mt19937 rng(4);
    const std::vector<float> x = random_row(rng, 1024);
    std::vector<float> im(x.size(), 0.01f);
    for (size_t i = 0; i < im.size(); i += 7) im[i] = 100.0f;
    auto weighted_error = [&](const std::vector<uint8_t>& blocks) {
        const std::vector<float> y = dequantize(TensorType::Q4_0_ROCMFP4, blocks, x.size());
        double e = 0;
        for (size_t i = 0; i < x.size(); ++i) e += im[i] * (x[i] - y[i]) * (x[i] - y[i]);
        return e;
    };
    EXPECT_LT(weighted_error(quantize(TensorType::Q4_0_ROCMFP4, x, im.data())),
              weighted_error(quantize(TensorType::Q4_0_ROCMFP4, x)));
}

TEST(RocmFp4, ZeroRowGivesZeroBytes) {
    for (TensorType t : {TensorType::Q4_0_ROCMFP4, TensorType::Q4_0_ROCMFP4_FAST, TensorType::Q6_0_ROCMFPX,
                         TensorType::Q8_0_ROCMFPX, TensorType::Q3_0_ROCMFPX}) {
        std::vector<float> x(64, 0.0f);
        x[40] = -0.0f;
        const std::vector<uint8_t> blocks = quantize(t, x);
        for (uint8_t b : blocks) EXPECT_EQ(b, 0) << ember::gguf::traits(t).name;
    }
}

// §4.2: a sub-block whose largest magnitude is not finite gets byte 0 and all codes 0 (NaN counts as not finite);
// the other sub-blocks of the row are quantized as usual.
TEST(RocmFp4, NonFiniteSubBlocksBecomeZero) {
    const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity()};
    for (float special : specials) {
        std::vector<float> x(kExample);
        x.insert(x.end(), kExample.begin(), kExample.end());
        x[3] = special;  // block 0, first half
        const std::vector<uint8_t> dual = quantize(TensorType::Q4_0_ROCMFP4, x);
        EXPECT_EQ(dual[16], 0);  // e[0] of block 0
        for (int j = 0; j < 16; ++j) EXPECT_EQ(dual[j] & 0x0f, 0);
        EXPECT_EQ(dual[17], 0x30);  // the second half is untouched
        EXPECT_EQ(std::vector<uint8_t>(dual.begin() + 18, dual.end()), quantize(TensorType::Q4_0_ROCMFP4, kExample));

        const std::vector<uint8_t> fast = quantize(TensorType::Q4_0_ROCMFP4_FAST, x);
        for (int j = 0; j < 17; ++j) EXPECT_EQ(fast[j], 0);
        const std::vector<float> y = dequantize(TensorType::Q4_0_ROCMFP4_FAST, fast, 64);
        for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], 0.0f);
        for (TensorType t : {TensorType::Q6_0_ROCMFPX, TensorType::Q8_0_ROCMFPX, TensorType::Q3_0_ROCMFPX}) {
            const std::vector<float> z = dequantize(t, quantize(t, x), 64);
            for (int i = 0; i < 16; ++i) EXPECT_EQ(z[i], 0.0f) << ember::gguf::traits(t).name;
            for (float v : z) EXPECT_TRUE(std::isfinite(v));
        }
    }
}

TEST(RocmFp4, DequantizationIsExactProducts) {
    // Every code times every scale: value * s exactly, so the fp32 result equals the double product.
    for (int e = 0; e < 256; ++e)
        for (int code = 0; code < 16; ++code) {
            std::vector<uint8_t> blk(17, static_cast<uint8_t>(code | (code << 4)));
            blk[16] = static_cast<uint8_t>(e);
            const std::vector<float> y = dequantize(TensorType::Q4_0_ROCMFP4_FAST, blk, 32);
            const double want = static_cast<double>(q::kRocmfp4Values[code]) * q::rocmfp_scale(static_cast<uint8_t>(e));
            ASSERT_EQ(static_cast<double>(y[0]), want);
            ASSERT_EQ(y[0], y[31]);
        }
}

// --- FP3, FP6, FP8 ---------------------------------------------------------------------------------------------

// The fp32 squared error of a sub-block at byte e under the spec's code rules for FP3 (nearest of {0, 1, 2, 4}
// with inclusive thresholds) and FP6/FP8 (x / s rounded half away from zero, clamped), written independently here.
float sibling_error(TensorType t, const float* x, int n, int e) {
    const float s = q::rocmfp_scale(static_cast<uint8_t>(e));
    float err = 0.0f;
    for (int i = 0; i < n; ++i) {
        float v;
        if (t == TensorType::Q3_0_ROCMFPX) {
            const float a = std::fabs(x[i] * (1.0f / s));
            const float m = a <= 0.5f ? 0.0f : a <= 1.5f ? 1.0f : a <= 3.0f ? 2.0f : 4.0f;
            v = x[i] < 0 ? -m : m;
        } else {
            const float lo = t == TensorType::Q6_0_ROCMFPX ? -32.0f : -127.0f;
            const float hi = t == TensorType::Q6_0_ROCMFPX ? 31.0f : 127.0f;
            v = std::round(std::fmin(std::fmax(x[i] / s, lo), hi));
        }
        const float d = x[i] - v * s;
        err += d * d;
    }
    return err;
}

TEST(RocmFpx, Fp3AndFp6ChooseTheExhaustiveArgminAndFp8TheNearestByte) {
    std::mt19937 rng(5);
    for (TensorType t : {TensorType::Q3_0_ROCMFPX, TensorType::Q6_0_ROCMFPX, TensorType::Q8_0_ROCMFPX}) {
        const std::vector<float> x = random_row(rng, 512);
        const std::vector<uint8_t> blocks = quantize(t, x);
        const std::vector<float> y = dequantize(t, blocks, x.size());
        const auto& traits = ember::gguf::traits(t);
        const int sub = t == TensorType::Q8_0_ROCMFPX ? 32 : 16;
        for (size_t p = 0; p < x.size() / sub; ++p) {
            const uint8_t* blk = blocks.data() + (p * sub / 32) * traits.block_bytes;
            const uint8_t e = t == TensorType::Q8_0_ROCMFPX ? blk[32] : blk[traits.block_bytes - 2 + p % 2];
            ASSERT_GE(e, 1);
            ASSERT_LE(e, 0x7E);
            const float* xs = x.data() + p * sub;
            // The decoded values are those of the spec's code rule at the chosen byte.
            float decoded_err = 0.0f;
            for (int i = 0; i < sub; ++i) {
                const float d = xs[i] - y[p * sub + i];
                decoded_err += d * d;
            }
            ASSERT_EQ(decoded_err, sibling_error(t, xs, sub, e)) << traits.name << " part " << p;
            if (t == TensorType::Q8_0_ROCMFPX) {
                float max = 0.0f;
                for (int i = 0; i < sub; ++i) max = std::fmax(max, std::fabs(xs[i]));
                const double target = max / 127.0f;
                for (int other = 1; other <= 126; ++other)
                    ASSERT_LE(std::fabs(q::rocmfp_scale(e) - target),
                              std::fabs(q::rocmfp_scale(static_cast<uint8_t>(other)) - target));
            } else {
                for (int other = 1; other <= 126; ++other) {
                    const float err = sibling_error(t, xs, sub, other);
                    ASSERT_TRUE(err > decoded_err || (err == decoded_err && other >= e))
                        << traits.name << " part " << p << ": byte " << other << " error " << err << " beats byte "
                        << int(e) << " error " << decoded_err;
                }
            }
        }
    }
}

TEST(RocmFpx, Fp6SignedZeroCodeIsMinus32) {
    std::vector<uint8_t> blk(26, 0);
    blk[0] = 32;  // weight 0: sign set, magnitude 0
    blk[24] = blk[25] = 0x40;  // s = 1
    const std::vector<float> y = dequantize(TensorType::Q6_0_ROCMFPX, blk, 32);
    EXPECT_EQ(y[0], -32.0f);
    EXPECT_EQ(y[1], 0.0f);
    // And the quantizer uses it: -32 * s is representable, +32 * s is not.
    std::vector<float> x(32, 0.0f);
    x[0] = -32.0f;
    x[1] = 31.0f;
    const std::vector<float> z = dequantize(TensorType::Q6_0_ROCMFPX, quantize(TensorType::Q6_0_ROCMFPX, x), 32);
    EXPECT_EQ(z[0], -32.0f);
    EXPECT_EQ(z[1], 31.0f);
}

}  // namespace
