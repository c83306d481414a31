// SPDX-License-Identifier: MIT
// The scalar K-quant table (dot_scalar_kquants.cpp), consulted by scalar_kernel() after the block types, and
// what the scalar kernels share with it.
#pragma once

#include "cpu/dot_kernels.h"
#include "quant/quant.h"

namespace ember::cpu::detail {

const Kernel* scalar_kquant_kernel(gguf::TensorType type);

// One super-block's contribution, shared by the scalar and AVX2 K-quant kernels so that both round alike:
// (d * d_y) * isum - (dmin * d_y) * msum.
inline float kquant_contribution(float d, float dmin, float dy, int isum, int msum) {
    return (d * dy) * static_cast<float>(isum) - (dmin * dy) * static_cast<float>(msum);
}

// The scalar tile over a row of blocks of `kWeights` weights: per activation row, the blocks' contributions summed
// in block order.
template <typename Block, typename ActivationBlock, int kWeights,
          float (*Contribution)(const Block&, const ActivationBlock&)>
void per_block_tile(const void* w_row, const std::byte* act, size_t act_stride, int n_act, int64_t cols, float* out) {
    const auto* w = static_cast<const Block*>(w_row);
    for (int t = 0; t < n_act; ++t) {
        const auto* a = reinterpret_cast<const ActivationBlock*>(act + t * act_stride);
        float sum = 0.0f;
        for (int64_t k = 0; k < cols / kWeights; ++k) sum += Contribution(w[k], a[k]);
        out[t] = sum;
    }
}

}  // namespace ember::cpu::detail
