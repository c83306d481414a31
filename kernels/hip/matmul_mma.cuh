// SPDX-License-Identifier: MIT
// Matrix products of many tokens on the tensor cores (CUDA sm_80 and later, `mma.sync` with f32 accumulation): the
// tiles of matmul_tiled.cu with block-quantized weights decoded to f16 once per tile, float weights as split TF32
// products. Other devices keep the scalar tiles.
#pragma once

#include "kernels.h"

namespace ember::gpu_kernels {

struct ExpertGroups;  // expert_tiles.cuh (device code; this header stays plain C++)

// Whether the tensor-core products run for weights of `type` on this launch's device.
bool mma_available(const Launch& l, uint32_t type);
void matmul_mma(const Launch& l, const Weights& w, const Rows& x, const Rows& out, const float* bias);
// Slots already grouped by expert, in tiles of experts_mma_tile_slots(slots, n_experts) slots.
int experts_mma_tile_slots(int64_t slots, int64_t n_experts);
void matmul_experts_mma(const Launch& l, const Weights& w, int64_t n_experts, const Rows& x, bool x_per_slot, int k,
                        const ExpertGroups& groups, int64_t slots, const Rows& out);

}  // namespace ember::gpu_kernels
