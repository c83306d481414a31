// SPDX-License-Identifier: MIT
// The K-quant quantizers are Ember's own (the gguf package has none to compare with), so they are held to quality
// bounds: the round-trip error on Gaussian rows, against the error of the plain max-scaling a naive quantizer
// would have and against fixed ceilings; plus structural checks (every code in range, imatrix honoured).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <ostream>
#include <random>
#include <vector>

#include "quant/quant.h"

namespace {

using ember::gguf::TensorType;
namespace q = ember::quant;

std::vector<float> gaussian_row(std::mt19937& rng, int n, float sigma) {
    std::normal_distribution<float> normal(0.0f, sigma);
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = normal(rng);
    return x;
}

std::vector<float> round_trip(TensorType t, const std::vector<float>& x, const float* imatrix = nullptr) {
    const auto n = static_cast<int64_t>(x.size());
    std::vector<uint8_t> blocks(ember::gguf::row_bytes(t, n));
    q::quantize_row(t, x.data(), blocks.data(), n, imatrix);
    q::validate_row(t, blocks.data(), n);
    std::vector<float> y(x.size());
    q::dequantize_row(t, blocks.data(), y.data(), n);
    return y;
}

double relative_rmse(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>* w = nullptr) {
    double err = 0, ref = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        const double wi = w ? (*w)[i] : 1.0;
        err += wi * (x[i] - y[i]) * (x[i] - y[i]);
        ref += wi * x[i] * x[i];
    }
    return std::sqrt(err / ref);
}

struct Quality {
    TensorType type;
    int group;       // weights per sub-block
    int levels;      // codes per weight
    bool affine;     // codes with a minimum (Q2_K, Q4_K, Q5_K) or symmetric around 0 (Q3_K, Q6_K)
    double ceiling;  // largest relative RMSE accepted on Gaussian rows
};

// The plain max-scaling quantizer at the same bit width, with exact (unquantized) float scales and no search:
// affine types spread [min, max] of each group over the levels; symmetric ones map the weight of largest
// magnitude to the most negative code.
double naive_rmse(const std::vector<float>& x, const Quality& c) {
    std::vector<float> y(x.size());
    for (size_t g = 0; g < x.size(); g += c.group) {
        float lo = x[g], hi = x[g], max = 0;
        for (int i = 0; i < c.group; ++i) {
            lo = std::fmin(lo, x[g + i]);
            hi = std::fmax(hi, x[g + i]);
            if (std::fabs(x[g + i]) > std::fabs(max)) max = x[g + i];
        }
        for (int i = 0; i < c.group; ++i) {
            if (c.affine) {
                const float step = (hi - lo) / static_cast<float>(c.levels - 1);
                y[g + i] = lo + step * std::round((x[g + i] - lo) / step);
            } else {
                const float s = max / static_cast<float>(-c.levels / 2);
                y[g + i] = s * std::fmin(std::fmax(std::round(x[g + i] / s), -c.levels / 2.0f), c.levels / 2.0f - 1);
            }
        }
    }
    return relative_rmse(x, y);
}

void PrintTo(const Quality& q, std::ostream* os) { *os << ember::gguf::traits(q.type).name; }

class KQuantQuality : public testing::TestWithParam<Quality> {};

TEST_P(KQuantQuality, RoundTripErrorIsBounded) {
    const Quality c = GetParam();
    std::mt19937 rng(7);
    for (float sigma : {1e-3f, 0.02f, 1.0f, 30.0f}) {
        const std::vector<float> x = gaussian_row(rng, 4096, sigma);
        const std::vector<float> y = round_trip(c.type, x);
        const double rmse = relative_rmse(x, y);
        std::printf("%s sigma %g: relative rmse %.5f, naive %.5f\n", ember::gguf::traits(c.type).name.data(), sigma,
                    rmse, naive_rmse(x, c));
        EXPECT_LT(rmse, c.ceiling) << "sigma " << sigma;
        EXPECT_LT(rmse, naive_rmse(x, c)) << "sigma " << sigma;
    }
}

INSTANTIATE_TEST_SUITE_P(
    KQuants, KQuantQuality,
    // Ceilings about 8% above what the quantizers reach (0.267, 0.143, 0.071, 0.036, 0.017).
    testing::Values(Quality{TensorType::Q2_K, 16, 4, true, 0.29}, Quality{TensorType::Q3_K, 16, 8, false, 0.155},
                    Quality{TensorType::Q4_K, 32, 16, true, 0.077}, Quality{TensorType::Q5_K, 32, 32, true, 0.039},
                    Quality{TensorType::Q6_K, 16, 64, false, 0.0185}),
    [](const auto& param_info) { return std::string(ember::gguf::traits(param_info.param.type).name); });

TEST(KQuantQuality, FinerTypesAreMoreAccurate) {
    std::mt19937 rng(8);
    const std::vector<float> x = gaussian_row(rng, 8192, 1.0f);
    double previous = 1.0;
    for (TensorType t : {TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K,
                         TensorType::Q8_K}) {
        const double rmse = relative_rmse(x, round_trip(t, x));
        EXPECT_LT(rmse, previous * 0.75) << ember::gguf::traits(t).name;
        previous = rmse;
    }
}

TEST(KQuantQuality, ImatrixLowersTheWeightedError) {
    std::mt19937 rng(9);
    const std::vector<float> x = gaussian_row(rng, 4096, 1.0f);
    std::vector<float> im(x.size(), 0.01f);
    for (size_t i = 0; i < im.size(); i += 5) im[i] = 50.0f;
    for (TensorType t : {TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}) {
        const double plain = relative_rmse(x, round_trip(t, x), &im);
        const double weighted = relative_rmse(x, round_trip(t, x, im.data()), &im);
        EXPECT_LT(weighted, plain) << ember::gguf::traits(t).name;
    }
}

TEST(KQuantQuality, SpecialRows) {
    for (TensorType t : {TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K,
                         TensorType::Q8_K}) {
        const std::vector<float> zeros(512, 0.0f);
        for (float v : round_trip(t, zeros)) EXPECT_EQ(v, 0.0f) << ember::gguf::traits(t).name;
        std::vector<float> constant(512, 0.75f);
        for (float v : round_trip(t, constant)) EXPECT_NEAR(v, 0.75f, 0.75f * 0.02f) << ember::gguf::traits(t).name;
        std::vector<float> spike(512, 0.0f);  // one large weight among zeros
        spike[300] = -5.0f;
        const std::vector<float> y = round_trip(t, spike);
        EXPECT_NEAR(y[300], -5.0f, 5.0f * 0.1f) << ember::gguf::traits(t).name;
        EXPECT_EQ(y[0], 0.0f) << ember::gguf::traits(t).name;
    }
}

TEST(Q8K, CodesAreWithinHalfAStepAndBlockSumsMatch) {
    std::mt19937 rng(10);
    const std::vector<float> x = gaussian_row(rng, 1024, 3.0f);
    std::vector<uint8_t> blocks(ember::gguf::row_bytes(TensorType::Q8_K, 1024));
    q::quantize_row(TensorType::Q8_K, x.data(), blocks.data(), 1024);
    EXPECT_NO_THROW(q::validate_row(TensorType::Q8_K, blocks.data(), 1024));
    std::vector<float> y(1024);
    q::dequantize_row(TensorType::Q8_K, blocks.data(), y.data(), 1024);
    for (int b = 0; b < 4; ++b) {
        const float d = q::load_f32(blocks.data() + b * 292);
        for (int i = 0; i < 256; ++i) EXPECT_LE(std::fabs(x[256 * b + i] - y[256 * b + i]), std::fabs(d) * 0.5001f);
    }
}

}  // namespace
