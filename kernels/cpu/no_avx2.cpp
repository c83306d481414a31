// SPDX-License-Identifier: MIT
// Non-x86 builds: no AVX2 kernels (isa_supported(Isa::avx2) is false there, so this is never consulted).
#include "cpu/dot_kernels.h"

namespace ember::cpu::detail {

const Kernel* avx2_kernel(gguf::TensorType) { return nullptr; }
bool avx2_accumulate(gguf::TensorType, const void*, const float*, int, float*, int64_t, int64_t) { return false; }
void avx2_quantize_q8_0(const float*, void*, int64_t) {}
void avx2_round_half_away(const float*, float*, int64_t) {}

}  // namespace ember::cpu::detail
