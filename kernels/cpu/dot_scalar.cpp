// SPDX-License-Identifier: MIT
// Scalar reference kernels for the 32-weight types against Q8_0 activations and for float weights against F32
// activations. Each block contributes its integer code sum times its scales, accumulated in block order; the
// ROCmFP4 types follow ../shared/specs/rocmfp4.md §7.1 exactly: sum += (s(e0) * d_y) * sumi0 + (s(e1) * d_y) * sumi1.
#include "cpu/dot_kernels.h"
#include "cpu/scalar_kernels.h"
#include "quant/quant.h"

namespace ember::cpu::detail {

namespace {

using quant::load_fp16;

int nibble(const uint8_t* qs, int i) { return i < 16 ? (qs[i] & 0x0f) : (qs[i - 16] >> 4); }

int fifth_bit(const uint8_t* qh, int i) {
    uint32_t h;
    std::memcpy(&h, qh, 4);
    return static_cast<int>((h >> i) & 1);
}

uint32_t bits_at(const uint8_t* stream, int pos, int width) {
    uint32_t v = 0;
    for (int b = 0; b < width; ++b) v |= static_cast<uint32_t>((stream[(pos + b) / 8] >> ((pos + b) % 8)) & 1) << b;
    return v;
}

// Block contributions: (weight block, activation block) -> float.
float q4_0_block(const block::Q4_0& w, const block::Q8_0& a) {
    int sumi = 0;
    for (int i = 0; i < 32; ++i) sumi += (nibble(w.qs, i) - 8) * a.qs[i];
    return static_cast<float>(sumi) * (load_fp16(w.d) * load_fp16(a.d));
}

float q4_1_block(const block::Q4_1& w, const block::Q8_0& a) {
    int sumi = 0, suma = 0;
    for (int i = 0; i < 32; ++i) {
        sumi += nibble(w.qs, i) * a.qs[i];
        suma += a.qs[i];
    }
    const float da = load_fp16(a.d);
    return static_cast<float>(sumi) * (load_fp16(w.d) * da) + static_cast<float>(suma) * (load_fp16(w.m) * da);
}

float q5_0_block(const block::Q5_0& w, const block::Q8_0& a) {
    int sumi = 0;
    for (int i = 0; i < 32; ++i) sumi += ((nibble(w.qs, i) | (fifth_bit(w.qh, i) << 4)) - 16) * a.qs[i];
    return static_cast<float>(sumi) * (load_fp16(w.d) * load_fp16(a.d));
}

float q5_1_block(const block::Q5_1& w, const block::Q8_0& a) {
    int sumi = 0, suma = 0;
    for (int i = 0; i < 32; ++i) {
        sumi += (nibble(w.qs, i) | (fifth_bit(w.qh, i) << 4)) * a.qs[i];
        suma += a.qs[i];
    }
    const float da = load_fp16(a.d);
    return static_cast<float>(sumi) * (load_fp16(w.d) * da) + static_cast<float>(suma) * (load_fp16(w.m) * da);
}

float q8_0_block(const block::Q8_0& w, const block::Q8_0& a) {
    int sumi = 0;
    for (int i = 0; i < 32; ++i) sumi += w.qs[i] * a.qs[i];
    return static_cast<float>(sumi) * (load_fp16(w.d) * load_fp16(a.d));
}

float mxfp4_block(const block::MXFP4& w, const block::Q8_0& a) {
    int sumi = 0;
    for (int i = 0; i < 32; ++i) sumi += quant::kMxfp4Values[nibble(w.qs, i)] * a.qs[i];
    return static_cast<float>(sumi) * (quant::mxfp4_scale(w.e) * load_fp16(a.d));
}

float rocmfp4_block(const block::Q4_0_ROCMFP4& w, const block::Q8_0& a) {
    int sumi0 = 0, sumi1 = 0;
    for (int j = 0; j < 16; ++j) {
        sumi0 += quant::kRocmfp4Values[w.qs[j] & 0x0f] * a.qs[j];
        sumi1 += quant::kRocmfp4Values[w.qs[j] >> 4] * a.qs[j + 16];
    }
    const float dy = load_fp16(a.d);
    return (quant::rocmfp_scale(w.e[0]) * dy) * static_cast<float>(sumi0) +
           (quant::rocmfp_scale(w.e[1]) * dy) * static_cast<float>(sumi1);
}

float rocmfp4_fast_block(const block::Q4_0_ROCMFP4_FAST& w, const block::Q8_0& a) {
    int sumi = 0;
    for (int j = 0; j < 16; ++j)
        sumi += quant::kRocmfp4Values[w.qs[j] & 0x0f] * a.qs[j] + quant::kRocmfp4Values[w.qs[j] >> 4] * a.qs[j + 16];
    return (quant::rocmfp_scale(w.e) * load_fp16(a.d)) * static_cast<float>(sumi);
}

// FP6 and FP3: the dual-scale form of §7.1 with their own codes.
float rocmfp6_block(const block::Q6_0_ROCMFPX& w, const block::Q8_0& a) {
    int sumi[2] = {0, 0};
    for (int i = 0; i < 32; ++i) sumi[i / 16] += quant::rocmfp6_value(bits_at(w.qs, 6 * i, 6)) * a.qs[i];
    const float dy = load_fp16(a.d);
    return (quant::rocmfp_scale(w.e[0]) * dy) * static_cast<float>(sumi[0]) +
           (quant::rocmfp_scale(w.e[1]) * dy) * static_cast<float>(sumi[1]);
}

float rocmfp3_block(const block::Q3_0_ROCMFPX& w, const block::Q8_0& a) {
    int sumi[2] = {0, 0};
    for (int i = 0; i < 32; ++i) sumi[i / 16] += quant::kRocmfp3Values[bits_at(w.qs, 3 * i, 3)] * a.qs[i];
    const float dy = load_fp16(a.d);
    return (quant::rocmfp_scale(w.e[0]) * dy) * static_cast<float>(sumi[0]) +
           (quant::rocmfp_scale(w.e[1]) * dy) * static_cast<float>(sumi[1]);
}

float rocmfp8_block(const block::Q8_0_ROCMFPX& w, const block::Q8_0& a) {
    int sumi = 0;
    for (int i = 0; i < 32; ++i) sumi += w.qs[i] * a.qs[i];
    return (quant::rocmfp_scale(w.e) * load_fp16(a.d)) * static_cast<float>(sumi);
}

template <typename Block, float (*Contribution)(const Block&, const block::Q8_0&)>
constexpr DotTileFn block_tile = per_block_tile<Block, block::Q8_0, block::qk, Contribution>;

// Float weights against F32 activations, summed in index order.
template <float (*Load)(const uint8_t*), int Bytes>
void float_tile(const void* w_row, const std::byte* act, size_t act_stride, int n_act, int64_t cols, float* out) {
    const auto* w = static_cast<const uint8_t*>(w_row);
    for (int t = 0; t < n_act; ++t) {
        const std::byte* x = act + t * act_stride;
        float sum = 0.0f;
        for (int64_t i = 0; i < cols; ++i) sum += Load(w + Bytes * i) * quant::load_f32(reinterpret_cast<const uint8_t*>(x) + 4 * i);
        out[t] = sum;
    }
}

float load_bf16(const uint8_t* p) { return quant::bf16_to_fp32(quant::load_u16(p)); }

constexpr Kernel kScalarKernels[] = {
    {TT::F32, Isa::scalar, float_tile<quant::load_f32, 4>},
    {TT::F16, Isa::scalar, float_tile<quant::load_fp16, 2>},
    {TT::BF16, Isa::scalar, float_tile<load_bf16, 2>},
    {TT::Q4_0, Isa::scalar, block_tile<block::Q4_0, q4_0_block>},
    {TT::Q4_1, Isa::scalar, block_tile<block::Q4_1, q4_1_block>},
    {TT::Q5_0, Isa::scalar, block_tile<block::Q5_0, q5_0_block>},
    {TT::Q5_1, Isa::scalar, block_tile<block::Q5_1, q5_1_block>},
    {TT::Q8_0, Isa::scalar, block_tile<block::Q8_0, q8_0_block>},
    {TT::MXFP4, Isa::scalar, block_tile<block::MXFP4, mxfp4_block>},
    {TT::Q4_0_ROCMFP4, Isa::scalar, block_tile<block::Q4_0_ROCMFP4, rocmfp4_block>},
    {TT::Q4_0_ROCMFP4_FAST, Isa::scalar, block_tile<block::Q4_0_ROCMFP4_FAST, rocmfp4_fast_block>},
    {TT::Q6_0_ROCMFPX, Isa::scalar, block_tile<block::Q6_0_ROCMFPX, rocmfp6_block>},
    {TT::Q8_0_ROCMFPX, Isa::scalar, block_tile<block::Q8_0_ROCMFPX, rocmfp8_block>},
    {TT::Q3_0_ROCMFPX, Isa::scalar, block_tile<block::Q3_0_ROCMFPX, rocmfp3_block>},
};

}  // namespace

bool scalar_accumulate(gguf::TensorType type, const void* row, const float* weights, int n, float* acc,
                       int64_t acc_stride, int64_t cols) {
    const auto* r = static_cast<const uint8_t*>(row);
    float (*load)(const uint8_t*, int64_t);
    switch (type) {
        case gguf::TensorType::F32: load = [](const uint8_t* p, int64_t c) { return quant::load_f32(p + 4 * c); }; break;
        case gguf::TensorType::F16: load = [](const uint8_t* p, int64_t c) { return quant::load_fp16(p + 2 * c); }; break;
        case gguf::TensorType::BF16:
            load = [](const uint8_t* p, int64_t c) { return quant::bf16_to_fp32(quant::load_u16(p + 2 * c)); };
            break;
        default: return false;
    }
    for (int64_t c = 0; c < cols; ++c) {
        const float v = load(r, c);
        for (int i = 0; i < n; ++i) acc[i * acc_stride + c] += weights[i] * v;
    }
    return true;
}

const Kernel* scalar_kernel(gguf::TensorType type) {
    const Kernel* k = find_kernel(kScalarKernels, type);
    return k ? k : scalar_kquant_kernel(type);
}

}  // namespace ember::cpu::detail
