// SPDX-License-Identifier: MIT
// Activations as Q8_1-style blocks for the integer mat x vec: the block layout and the one rule that quantizes a
// block, used by quantize_q8_1 and by the norms that write their output's blocks as they go.
#pragma once

#include "gpu_device.cuh"

namespace ember::gpu_kernels {

// 32 activations as int8 codes q with y = d * q; s = d * sum(q) (for the offset of Q4_0).
struct alignas(8) ActBlock {
    float d;
    float s;
    int32_t q[8];  // byte j of the 32 is code j
};
static_assert(sizeof(ActBlock) == 40);

// Lane j of a group of 32 consecutive lanes holds value j of a block; every lane of the group takes part. The scale is
// the largest magnitude / 127 (NaN counts as 0), the codes round half away from zero, and the code sum is exact in a
// float (at most 32 * 127).
__device__ __forceinline__ void quantize_activation_block(float v, int j, ActBlock* out) {
    float amax = fmaxf(0.0f, fabsf(v));
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) amax = fmaxf(amax, gpu::shuffle_xor(amax, m));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const int q = static_cast<int>(fminf(fmaxf(roundf(v * id), -127.0f), 127.0f));
    float sum = static_cast<float>(q);
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) sum += gpu::shuffle_xor(sum, m);
    reinterpret_cast<int8_t*>(out->q)[j] = static_cast<int8_t>(q);
    if (j == 0) {
        out->d = d;
        out->s = d * sum;
    }
}

}  // namespace ember::gpu_kernels
