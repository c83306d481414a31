// SPDX-License-Identifier: MIT
// Matrix products of many tokens on the tensor cores (CUDA sm_80 and later, `mma.sync` with f32 accumulation): the
// tiles of matmul_tiled.cu with block-quantized weights decoded to f16 once per tile, float weights as split TF32
// products. Other devices keep the scalar tiles.
#pragma once

#include "kernels.h"

namespace ember::gpu_kernels {

// Whether the tensor-core products run for weights of `type` on this launch's device.
bool mma_available(const Launch& l, uint32_t type);
void matmul_mma(const Launch& l, const Weights& w, const Rows& x, const Rows& out, const float* bias);
// Slots already grouped by expert (offsets [n_experts + 1], list: the slots of expert e at offsets[e]..).
void matmul_experts_mma(const Launch& l, const Weights& w, int64_t n_experts, const Rows& x, bool x_per_slot, int k,
                        const int32_t* offsets, const int32_t* list, int64_t slots, const Rows& out);

}  // namespace ember::gpu_kernels
