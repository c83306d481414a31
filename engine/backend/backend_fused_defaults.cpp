// SPDX-License-Identifier: MIT
// The Backend base class's fused operations, composed from the plain ones: their reference semantics, and what
// every backend that does not fuse them (CPU, HIP/CUDA) runs.
#include <string>

#include "ember/backend.h"
#include "ember/error.h"

namespace ember {

namespace {

std::string shape(const Tensor& t) { return std::to_string(t.rows) + "x" + std::to_string(t.cols); }

void require_gated_shapes(const char* op, const Tensor& w_gate, const Tensor& w_up, const Tensor& up_scratch,
                          const Tensor& out) {
    if (w_gate.rows != w_up.rows || w_gate.cols != w_up.cols)
        throw Error(std::string(op) + ": gate weight [" + shape(w_gate) + "] and up weight [" + shape(w_up) +
                    "] differ in shape");
    if (up_scratch.rows != out.rows || up_scratch.cols != out.cols || up_scratch.type != gguf::TensorType::F32)
        throw Error(std::string(op) + ": up scratch [" + shape(up_scratch) + "] must be F32 shaped like the output [" +
                    shape(out) + "]");
}

}  // namespace

void Backend::matmul_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, const Tensor& x,
                           const Tensor& up_scratch, const Tensor& out) {
    require_gated_shapes("matmul_gated", w_gate, w_up, up_scratch, out);
    matmul(w_gate, x, out);
    matmul(w_up, x, up_scratch);
    gated_activation(act, out, up_scratch, out);
}

void Backend::matmul_experts_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, int64_t n_experts,
                                   const Tensor& x, const Tensor& ids, const Tensor& up_scratch, const Tensor& out) {
    require_gated_shapes("matmul_experts_gated", w_gate, w_up, up_scratch, out);
    matmul_experts(w_gate, n_experts, x, ids, out);
    matmul_experts(w_up, n_experts, x, ids, up_scratch);
    gated_activation(act, out, up_scratch, out);
}

}  // namespace ember
