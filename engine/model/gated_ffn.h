// SPDX-License-Identifier: MIT
// The dense gated feed-forward (SwiGLU, GeGLU): Wdown · act(Wgate h, Wup h), for blocks and shared experts alike.
#pragma once

#include <string>

#include "backend/backend.h"
#include "model/weight_binder.h"

namespace ember::model {

struct GatedFfnWeights {
    Tensor gate;  // [n_embd, n_ff]
    Tensor up;    // [n_embd, n_ff]
    Tensor down;  // [n_ff, n_embd]
};

// Binds `<b>ffn_{gate,up,down}<suffix>.weight` of a feed-forward n_ff wide (suffix "_shexp": a shared expert).
GatedFfnWeights bind_gated_ffn(WeightBinder& w, const std::string& b, const std::string& suffix, int64_t n_embd,
                               int64_t n_ff);

// out = Wdown · act(Wgate h, Wup h); up_scratch as Backend::matmul_gated's, gate the activation rows [n, n_ff].
void gated_ffn(Backend& be, const GatedFfnWeights& f, Activation act, const Tensor& h, const Tensor& up_scratch,
               const Tensor& gate, const Tensor& out);

}  // namespace ember::model
