// SPDX-License-Identifier: MIT
// Weight rows of every kernel type for the kernel tests: quantized Gaussian rows, or random bytes whose scale
// fields are made finite (fp16) or valid (ROCmFP4 bytes <= 0x7E), so that every code pattern gets exercised.
#pragma once

#include <cmath>
#include <random>
#include <vector>

#include "ember/gguf.h"
#include "quant/quant.h"

namespace ember::test {

using gguf::TensorType;

inline const std::vector<TensorType>& kernel_types() {
    static const std::vector<TensorType> types = {
        TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q4_0,  TensorType::Q4_1,
        TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K,  TensorType::Q3_K,
        TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K, TensorType::MXFP4, TensorType::Q4_0_ROCMFP4,
        TensorType::Q4_0_ROCMFP4_FAST, TensorType::Q6_0_ROCMFPX, TensorType::Q8_0_ROCMFPX, TensorType::Q3_0_ROCMFPX};
    return types;
}

inline std::vector<float> gaussian(std::mt19937& rng, int64_t n, float sigma = 1.0f) {
    std::normal_distribution<float> normal(0.0f, sigma);
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = normal(rng);
    return x;
}

inline std::vector<uint8_t> quantized_row(TensorType t, const std::vector<float>& x) {
    std::vector<uint8_t> out(gguf::row_bytes(t, static_cast<int64_t>(x.size())));
    quant::quantize_row(t, x.data(), out.data(), static_cast<int64_t>(x.size()));
    return out;
}

// Random bytes with every scale field set to something a real file could hold.
inline std::vector<uint8_t> random_row(TensorType t, int64_t n, std::mt19937& rng) {
    const auto& traits = gguf::traits(t);
    std::vector<uint8_t> out(gguf::row_bytes(t, n));
    std::uniform_int_distribution<int> byte(0, 255);
    for (uint8_t& b : out) b = static_cast<uint8_t>(byte(rng));
    std::uniform_real_distribution<float> log2_scale(-8.0f, 2.0f);
    auto fp16_at = [&](uint8_t* p, bool positive) {
        float v = std::exp2(log2_scale(rng));
        if (!positive && byte(rng) < 128) v = -v;
        quant::store_fp16(p, v);
    };
    std::uniform_int_distribution<int> scale_byte(0x20, 0x50);
    if (t == TensorType::F32 || t == TensorType::F16 || t == TensorType::BF16) {
        std::vector<float> x = gaussian(rng, n);
        quant::quantize_row(t, x.data(), out.data(), n);
        return out;
    }
    for (size_t b = 0; b < out.size() / traits.block_bytes; ++b) {
        uint8_t* p = out.data() + b * traits.block_bytes;
        switch (t) {
            case TensorType::Q4_0: case TensorType::Q5_0: case TensorType::Q8_0: fp16_at(p, false); break;
            case TensorType::Q4_1: case TensorType::Q5_1: fp16_at(p, true); fp16_at(p + 2, false); break;
            case TensorType::Q2_K: fp16_at(p + 80, true); fp16_at(p + 82, true); break;
            case TensorType::Q3_K: fp16_at(p + 108, false); break;
            case TensorType::Q4_K: case TensorType::Q5_K: fp16_at(p, true); fp16_at(p + 2, true); break;
            case TensorType::Q6_K: fp16_at(p + 208, false); break;
            case TensorType::MXFP4: p[0] = static_cast<uint8_t>(scale_byte(rng) + 0x50); break;
            case TensorType::Q4_0_ROCMFP4: p[16] = static_cast<uint8_t>(scale_byte(rng)); p[17] = static_cast<uint8_t>(scale_byte(rng)); break;
            case TensorType::Q4_0_ROCMFP4_FAST: p[16] = static_cast<uint8_t>(scale_byte(rng)); break;
            case TensorType::Q6_0_ROCMFPX: p[24] = static_cast<uint8_t>(scale_byte(rng)); p[25] = static_cast<uint8_t>(scale_byte(rng)); break;
            case TensorType::Q8_0_ROCMFPX: p[32] = static_cast<uint8_t>(scale_byte(rng)); break;
            case TensorType::Q3_0_ROCMFPX: p[12] = static_cast<uint8_t>(scale_byte(rng)); p[13] = static_cast<uint8_t>(scale_byte(rng)); break;
            default: break;
        }
    }
    return out;
}

}  // namespace ember::test
