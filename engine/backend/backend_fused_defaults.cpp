// SPDX-License-Identifier: MIT
// The Backend base class's fused operations, composed from the plain ones: their reference semantics, and what
// every backend that does not fuse them (CPU, HIP/CUDA) runs.
#include "backend/backend.h"

namespace ember {

void Backend::do_matmul_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, const Tensor& x,
                              const Tensor& up_scratch, const Tensor& out) {
    matmul(w_gate, x, out);
    matmul(w_up, x, up_scratch);
    gated_activation(act, out, up_scratch, out);
}

void Backend::do_matmul_experts_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, int64_t n_experts,
                                      const Tensor& x, const Tensor& ids, const Tensor& up_scratch, const Tensor& out) {
    matmul_experts(w_gate, n_experts, x, ids, out);
    matmul_experts(w_up, n_experts, x, ids, up_scratch);
    gated_activation(act, out, up_scratch, out);
}

}  // namespace ember
