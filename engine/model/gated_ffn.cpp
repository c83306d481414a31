// SPDX-License-Identifier: MIT
// The dense gated feed-forward's binding and forward.
#include "model/gated_ffn.h"

namespace ember::model {

GatedFfnWeights bind_gated_ffn(WeightBinder& w, const std::string& b, const std::string& suffix, int64_t n_embd,
                               int64_t n_ff) {
    GatedFfnWeights f;
    f.gate = w.require(b + "ffn_gate" + suffix + ".weight", {n_embd, n_ff});
    f.up = w.require(b + "ffn_up" + suffix + ".weight", {n_embd, n_ff});
    f.down = w.require(b + "ffn_down" + suffix + ".weight", {n_ff, n_embd});
    return f;
}

void gated_ffn(Backend& be, const GatedFfnWeights& f, Activation act, const Tensor& h, const Tensor& up_scratch,
               const Tensor& gate, const Tensor& out) {
    be.matmul_gated(act, f.gate, f.up, h, up_scratch, gate);
    be.matmul(f.down, gate, out);
}

}  // namespace ember::model
