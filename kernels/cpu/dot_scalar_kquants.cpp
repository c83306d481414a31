// SPDX-License-Identifier: MIT
// Scalar reference kernels for the K-quants against Q8_K activations. Per super-block: the integer sum of
// (sub-block scale x code x activation), and for the types with minimums the integer sum of (sub-block min x
// activation block sum); then one float contribution (scalar_kernels.h), accumulated in super-block order.
#include "cpu/dot_kernels.h"
#include "cpu/scalar_kernels.h"
#include "quant/quant.h"

namespace ember::cpu::detail {

namespace {

using quant::load_fp16;

int bsum(const block::Q8_K& a, int j) {
    int16_t v;
    std::memcpy(&v, a.bsums + 2 * j, 2);
    return v;
}

// Low 2 bits of weight i in the Q2_K/Q3_K packing.
int low2(const uint8_t* qs, int i) { return (qs[32 * (i / 128) + i % 32] >> (2 * ((i % 128) / 32))) & 3; }

// The types with 16 sub-blocks of 16 (Q2_K, Q3_K, Q6_K): the sum over sub-blocks j of scale(j) times the sub-block's
// sum of code(i) x activation.
template <typename Code, typename Scale>
int scaled_sub_block_sum(const block::Q8_K& a, Code code, Scale scale) {
    int isum = 0;
    for (int j = 0; j < 16; ++j) {
        int s = 0;
        for (int i = 16 * j; i < 16 * j + 16; ++i) s += code(i) * a.qs[i];
        isum += scale(j) * s;
    }
    return isum;
}

float q2_k_block(const block::Q2_K& w, const block::Q8_K& a) {
    const int isum = scaled_sub_block_sum(
        a, [&](int i) { return low2(w.qs, i); }, [&](int j) { return w.scales[j] & 0x0f; });
    int msum = 0;
    for (int j = 0; j < 16; ++j) msum += (w.scales[j] >> 4) * bsum(a, j);
    return kquant_contribution(load_fp16(w.d), load_fp16(w.dmin), quant::load_f32(a.d), isum, msum);
}

float q3_k_block(const block::Q3_K& w, const block::Q8_K& a) {
    const int isum = scaled_sub_block_sum(
        a,
        [&](int i) {
            const int high = (w.hmask[i % 32] >> (i / 32)) & 1;
            return low2(w.qs, i) - (high ? 0 : 4);
        },
        [&](int j) { return quant::q3_k_scale(w.scales, j); });
    return kquant_contribution(load_fp16(w.d), 0.0f, quant::load_f32(a.d), isum, 0);
}

template <typename Block, bool FifthBit>
float q45_k_block(const Block& w, const block::Q8_K& a) {
    int isum = 0, msum = 0;
    for (int s = 0; s < 8; ++s) {
        uint8_t sc, m;
        quant::k4_scale_min(w.scales, s, sc, m);
        int sub = 0;
        for (int l = 0; l < 32; ++l) {
            int q = (w.qs[32 * (s / 2) + l] >> (4 * (s & 1))) & 0x0f;
            if constexpr (FifthBit) q |= ((w.qh[l] >> s) & 1) << 4;
            sub += q * a.qs[32 * s + l];
        }
        isum += sc * sub;
        msum += m * (bsum(a, 2 * s) + bsum(a, 2 * s + 1));
    }
    return kquant_contribution(load_fp16(w.d), load_fp16(w.dmin), quant::load_f32(a.d), isum, msum);
}

float q6_k_block(const block::Q6_K& w, const block::Q8_K& a) {
    const int isum = scaled_sub_block_sum(
        a,
        [&](int i) {
            const int h = i / 128, r = i % 128;
            const int low = (w.ql[64 * h + r % 64] >> (4 * (r / 64))) & 0x0f;
            const int high = (w.qh[32 * h + r % 32] >> (2 * (r / 32))) & 3;
            return (low | (high << 4)) - 32;
        },
        [&](int j) { return static_cast<int>(w.scales[j]); });
    return kquant_contribution(load_fp16(w.d), 0.0f, quant::load_f32(a.d), isum, 0);
}

template <typename Block, float (*Contribution)(const Block&, const block::Q8_K&)>
constexpr DotTileFn kquant_tile = per_block_tile<Block, block::Q8_K, block::qk_k, Contribution>;

constexpr Kernel kScalarKQuantKernels[] = {
    {TT::Q2_K, Isa::scalar, kquant_tile<block::Q2_K, q2_k_block>},
    {TT::Q3_K, Isa::scalar, kquant_tile<block::Q3_K, q3_k_block>},
    {TT::Q4_K, Isa::scalar, kquant_tile<block::Q4_K, q45_k_block<block::Q4_K, false>>},
    {TT::Q5_K, Isa::scalar, kquant_tile<block::Q5_K, q45_k_block<block::Q5_K, true>>},
    {TT::Q6_K, Isa::scalar, kquant_tile<block::Q6_K, q6_k_block>},
};

}  // namespace

const Kernel* scalar_kquant_kernel(gguf::TensorType type) {
    return find_kernel(kScalarKQuantKernels, type);
}

}  // namespace ember::cpu::detail
