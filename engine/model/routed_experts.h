// SPDX-License-Identifier: MIT
// The routed mixture-of-experts feed-forward that qwen3moe, gpt-oss and qwen35moe share: router, top-k, the chosen
// experts' gated products, their weighted sum.
#pragma once

#include <cstdint>
#include <optional>

#include "backend/backend.h"
#include "model/gated_ffn.h"
#include "model/residual_norm.h"

namespace ember::model {

struct RoutedExpertWeights {
    Tensor router;     // [n_embd, n_expert]
    Tensor gate_exps;  // [n_embd, n_ff_exp, n_expert]
    Tensor up_exps;    // [n_embd, n_ff_exp, n_expert]
    Tensor down_exps;  // [n_ff_exp, n_embd, n_expert]
    // gpt-oss: biases on the router and on every expert's products.
    std::optional<Tensor> router_bias;     // [n_expert]
    std::optional<Tensor> gate_exps_bias;  // [n_ff_exp, n_expert]
    std::optional<Tensor> up_exps_bias;    // [n_ff_exp, n_expert]
    std::optional<Tensor> down_exps_bias;  // [n_embd, n_expert]
};

// The activations of one call for T tokens: router [T, n_expert], ids and weights [T, k], and the experts' rows
// gate, up [T * k, n_ff_exp], down [T * k, n_embd].
struct RoutedExpertScratch {
    Tensor router, ids, weights, gate, up, down;
};

// A shared expert beside the routed ones (qwen35moe): its feed-forward, scaled per token by sigmoid(gate_weight · h),
// joins the sum. up and act [T, n_ff_shexp], out [T, n_embd] and gate [T, 1] are its activations.
struct SharedExpert {
    const GatedFfnWeights& ffn;
    const Tensor& gate_weight;  // [n_embd] (one row)
    Tensor up, act, out, gate;
};

// out[t] = sum_j weights[t, j] * E_{ids[t, j]}(h[t]) (+ the shared expert's term): a softmax over all experts'
// logits, the k most probable renormalized (the same as a softmax over the k largest logits),
// E(h) = down(act(gate h, up h)), then `then` if given. out and then->out may alias h. The products that read h run
// back to back, so that a backend prepares h once for all of them.
void routed_experts(Backend& be, const RoutedExpertWeights& w, int64_t n_expert, int k, Activation act, const Tensor& h,
                    const RoutedExpertScratch& s, const Tensor& out, const SharedExpert* shared = nullptr,
                    const ResidualNorm* then = nullptr);

}  // namespace ember::model
