// SPDX-License-Identifier: MIT
// The scalar K-quant table (dot_scalar_kquants.cpp), consulted by scalar_kernel() after the block types.
#pragma once

#include "cpu/dot_kernels.h"

namespace ember::cpu::detail {

const Kernel* scalar_kquant_kernel(gguf::TensorType type);

// One super-block's contribution, shared by the scalar and AVX2 K-quant kernels so that both round alike:
// (d * d_y) * isum - (dmin * d_y) * msum.
inline float kquant_contribution(float d, float dmin, float dy, int isum, int msum) {
    return (d * dy) * static_cast<float>(isum) - (dmin * dy) * static_cast<float>(msum);
}

}  // namespace ember::cpu::detail
