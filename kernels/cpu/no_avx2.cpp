// SPDX-License-Identifier: MIT
// Non-x86 builds: no AVX2 kernels (isa_supported(Isa::avx2) is false there, so this is never consulted).
#include "cpu/dot_kernels.h"

namespace ember::cpu::detail {

const Kernel* avx2_kernel(gguf::TensorType) { return nullptr; }

}  // namespace ember::cpu::detail
