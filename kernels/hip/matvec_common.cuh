// SPDX-License-Identifier: MIT
// Pieces shared by the matrix-product kernels.
#pragma once

#include "quant_blocks.cuh"

namespace ember::gpu_kernels {

// Sum over the LPR consecutive lanes of a group (LPR a power of two no larger than the warp).
template <int LPR>
__device__ __forceinline__ float group_sum(float v) {
    static_assert(LPR <= gpu::kWarpSize || gpu::kWarpSize < 32, "a row group must fit in a warp");
#pragma unroll
    for (int m = LPR / 2; m > 0; m >>= 1) v += gpu::shuffle_xor(v, m);
    return v;
}

}  // namespace ember::gpu_kernels
