// SPDX-License-Identifier: MIT
// MXFP4 (OCP microscaling FP4): an E8M0 shared exponent and 32 E2M1 codes in the Q4_0 nibble order. Values are
// kept doubled (0..12) with the scale halved, so that every product is exact in fp32.
#include <cmath>
#include <cstdio>

#include "quant/formats.h"

namespace ember::quant::detail {

namespace {
using block::qk;
}

void mxfp4_dequantize(const void* src, float* dst, int64_t n_blocks) {
    const auto* b = static_cast<const block::MXFP4*>(src);
    for (int64_t k = 0; k < n_blocks; ++k, dst += qk) {
        const float d = mxfp4_scale(b[k].e);
        for (int j = 0; j < qk / 2; ++j) {
            dst[j] = d * static_cast<float>(kMxfp4Values[b[k].qs[j] & 0x0f]);
            dst[j + qk / 2] = d * static_cast<float>(kMxfp4Values[b[k].qs[j] >> 4]);
        }
    }
}

// The exponent puts the largest magnitude into the top binade of the doubled codebook (amax / 2^e in [4, 8)),
// then each weight takes the code of least absolute error, the lowest code on ties.
void mxfp4_quantize(const float* x, void* dst, int64_t n, const float*) {
    auto* b = static_cast<block::MXFP4*>(dst);
    for (int64_t k = 0; k < n / qk; ++k, x += qk) {
        float amax = 0.0f;
        for (int i = 0; i < qk; ++i) amax = std::fmax(amax, std::fabs(x[i]));
        int e = 0;
        if (amax > 0.0f && std::isfinite(amax)) {
            e = static_cast<int>(std::floor(std::log2(amax))) - 2 + 127;
            e = e < 0 ? 0 : (e > 254 ? 254 : e);
        }
        const float d = mxfp4_scale(static_cast<uint8_t>(e));
        uint8_t q[qk];
        for (int i = 0; i < qk; ++i) {
            int best = 0;
            float best_err = std::fabs(d * static_cast<float>(kMxfp4Values[0]) - x[i]);
            for (int c = 1; c < 16; ++c) {
                const float err = std::fabs(d * static_cast<float>(kMxfp4Values[c]) - x[i]);
                if (err < best_err) {
                    best_err = err;
                    best = c;
                }
            }
            q[i] = static_cast<uint8_t>(best);
        }
        b[k].e = static_cast<uint8_t>(e);
        for (int j = 0; j < qk / 2; ++j) b[k].qs[j] = static_cast<uint8_t>(q[j] | (q[j + qk / 2] << 4));
    }
}

void mxfp4_validate(const void* src, int64_t n_blocks) {
    const auto* b = static_cast<const block::MXFP4*>(src);
    for (int64_t k = 0; k < n_blocks; ++k)
        if (b[k].e == 0xff) bad_block(k, "scale byte 0xFF is NaN in E8M0");
}

}  // namespace ember::quant::detail
