// SPDX-License-Identifier: MIT
// The routed mixture-of-experts feed-forward as backend calls.
#include "model/routed_experts.h"

namespace ember::model {

void routed_experts(Backend& be, const RoutedExpertWeights& w, int64_t n_expert, int k, Activation act, const Tensor& h,
                    const RoutedExpertScratch& s, const Tensor& out, const SharedExpert* shared,
                    const ResidualNorm* then) {
    // The router, its route and the shared expert's gate: one launch where a backend joins them.
    MoeRouterArgs router{h, &w.router, w.router_bias ? &*w.router_bias : nullptr, s.router, k, s.ids, s.weights};
    if (shared) {
        router.shared_gate_weight = &shared->gate_weight;
        router.shared_gate = shared->gate;
    }
    be.moe_router(router);
    if (w.gate_exps_bias) {
        // The experts' biases join before the activation, so the gated product is not fused.
        be.matmul_experts(w.gate_exps, n_expert, h, s.ids, s.gate);
        be.add_expert_bias(*w.gate_exps_bias, s.ids, s.gate);
        be.matmul_experts(w.up_exps, n_expert, h, s.ids, s.up);
        be.add_expert_bias(*w.up_exps_bias, s.ids, s.up);
        be.gated_activation(act, s.gate, s.up, s.gate);
        if (shared) be.matmul_gated(act, shared->ffn.gate, shared->ffn.up, h, shared->up, shared->act);
    } else if (shared) {
        be.moe_gate_up({act, &w.gate_exps, &w.up_exps, n_expert, h, s.ids, s.up, s.gate, &shared->ffn.gate,
                        &shared->ffn.up, shared->up, shared->act});
    } else {
        be.matmul_experts_gated(act, w.gate_exps, w.up_exps, n_expert, h, s.ids, s.up, s.gate);
    }
    MoeDownArgs down{&w.down_exps, n_expert, s.gate, s.ids, s.weights, s.down};
    if (shared) {
        down.shared_down = &shared->ffn.down;
        down.shared_act = shared->act;
        down.shared_gate = shared->gate;
        down.shared_out = shared->out;
    }
    down.out = out;
    if (!w.down_exps_bias) {
        if (then) {
            down.norm = &then->norm;
            down.residual = then->residual;
            down.norm_eps = then->eps;
            down.norm_out = then->out;
        }
        return be.moe_down_combine(down);
    }
    // gpt-oss: the experts' down biases join before the weighted sum.
    be.matmul_experts(w.down_exps, n_expert, s.gate, s.ids, s.down);
    be.add_expert_bias(*w.down_exps_bias, s.ids, s.down);
    if (!shared) {
        be.moe_combine(s.down, s.weights, out);
    } else {
        be.matmul(shared->ffn.down, shared->act, shared->out);
        be.moe_combine_shared(s.down, s.weights, shared->out, shared->gate, out);
    }
    if (then) be.add_rms_norm(then->residual, out, then->norm, then->eps, then->out);
}

}  // namespace ember::model
