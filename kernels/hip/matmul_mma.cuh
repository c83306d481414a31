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
// Dense products with few tiles split along the inputs into `split` (matmul_mma_split_bytes of device scratch; 0:
// no split); a nullptr split keeps one pass.
size_t matmul_mma_split_bytes(const Launch& l, const Weights& w, int64_t tokens);
void matmul_mma(const Launch& l, const Weights& w, const Rows& x, const Rows& out, const float* bias, void* split);
// out[t, r] = the parts partial[z, t, r] of a split product added in split order, plus bias[r] (bias may be nullptr).
void mma_split_sum(const Launch& l, const float* partial, int splits, int64_t tokens, int64_t rows, const Rows& out,
                   const float* bias);
// Slots already grouped by expert, in tiles of experts_mma_tile_slots(slots, n_experts) slots.
int experts_mma_tile_slots(int64_t slots, int64_t n_experts);
void matmul_experts_mma(const Launch& l, const Weights& w, int64_t n_experts, const Rows& x, bool x_per_slot, int k,
                        const ExpertGroups& groups, int64_t slots, const Rows& out);
// Gate and up of one shape and block-quantized type in one pass: out = act(gate . x, up . x), the two products summed
// as matmul_mma / matmul_experts_mma sum them. The grouped form takes tiles of kGatedMmaTileSlots slots.
inline constexpr int kGatedMmaTileSlots = 32;
bool mma_gated_available(const Launch& l, const Weights& gate, const Weights& up);
void matmul_gated_mma(const Launch& l, Gated act, const Weights& gate, const Weights& up, const Rows& x,
                      const Rows& out);
void matmul_experts_gated_mma(const Launch& l, Gated act, const Weights& gate, const Weights& up, int64_t n_experts,
                              const Rows& x, bool x_per_slot, int k, const ExpertGroups& groups, int64_t slots,
                              const Rows& out);

}  // namespace ember::gpu_kernels
