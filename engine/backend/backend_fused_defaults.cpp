// SPDX-License-Identifier: MIT
// The Backend base class's fused operations, composed from the plain ones: their reference semantics, and what
// every backend that does not fuse them (CPU, HIP/CUDA) runs.
#include "backend/backend.h"

namespace ember {

void Backend::do_matmul_many(const Tensor& x, std::span<const Product> products) {
    for (const Product& p : products) matmul(*p.w, x, p.out, p.bias);
}

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

void Backend::do_add_rms_norm(const Tensor& x, const Tensor& y, const Tensor& weight, float eps, const Tensor& out) {
    add(x, y, x);
    rms_norm(x, weight, eps, out);
}

void Backend::do_conv1d_causal_silu(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out) {
    conv1d_causal(x, weight, state, out);
    unary(UnaryOp::silu, out, out);
}

void Backend::do_deltanet_gates(const Tensor& beta, const Tensor& alpha, const Tensor& dt_bias, const Tensor& a) {
    unary(UnaryOp::sigmoid, beta, beta);
    add(alpha, dt_bias, alpha);
    unary(UnaryOp::softplus, alpha, alpha);
    mul(alpha, a, alpha);
}

void Backend::do_deltanet_recurrent(const DeltaNetArgs& a) {
    const DeltaRuleArgs& r = a.rule;
    deltanet_gates(r.beta, r.g, a.dt_bias, a.a);
    conv1d_causal_silu(a.mix, a.conv_weight, a.conv_state, a.conv);
    // q and k side by side (the usual layout) take one norm.
    if (r.q.buffer == r.k.buffer && r.q.row_stride == r.k.row_stride &&
        r.k.offset == r.q.offset + static_cast<size_t>(r.q.cols) * sizeof(float)) {
        Tensor qk = r.q;
        qk.cols += r.k.cols;
        l2_norm(qk, r.d_k, a.l2_eps, qk);
    } else {
        l2_norm(r.q, r.d_k, a.l2_eps, r.q);
        l2_norm(r.k, r.d_k, a.l2_eps, r.k);
    }
    delta_rule(r);
    const Tensor heads = r.out.reshaped(r.d_v);
    rms_norm_gated(heads, a.norm, a.z.reshaped(r.d_v), a.norm_eps, heads);
}

void Backend::do_moe_combine_shared(const Tensor& y, const Tensor& weights, const Tensor& shared, const Tensor& gate,
                                    const Tensor& out) {
    moe_combine(y, weights, out);
    unary(UnaryOp::sigmoid, gate, gate);
    mul(shared, gate, shared);
    add(out, shared, out);
}

void Backend::do_matmul_add_rms_norm(const Tensor& w, const Tensor& x, const Tensor& out, const Tensor* bias,
                                     const Tensor& residual, const Tensor& norm, float eps, const Tensor& norm_out) {
    matmul(w, x, out, bias);
    add_rms_norm(residual, out, norm, eps, norm_out);
}

void Backend::do_moe_router(const MoeRouterArgs& a) {
    const Product products[] = {{a.router, a.logits, a.router_bias}, {a.shared_gate_weight, a.shared_gate}};
    matmul_many(a.x, std::span(products, a.shared_gate_weight ? 2 : 1));
    moe_route(a.logits, a.k, a.ids, a.weights);
}

void Backend::do_moe_gate_up(const MoeGateUpArgs& a) {
    matmul_experts_gated(a.act, *a.gate_exps, *a.up_exps, a.n_experts, a.x, a.ids, a.up_scratch, a.out);
    matmul_gated(a.act, *a.shared_gate, *a.shared_up, a.x, a.shared_up_scratch, a.shared_out);
}

void Backend::do_moe_down_combine(const MoeDownArgs& a) {
    matmul_experts(*a.down, a.n_experts, a.act, a.ids, a.y);
    if (!a.shared_down) {
        moe_combine(a.y, a.weights, a.out);
    } else {
        matmul(*a.shared_down, a.shared_act, a.shared_out);
        moe_combine_shared(a.y, a.weights, a.shared_out, a.shared_gate, a.out);
    }
    if (a.norm) add_rms_norm(a.residual, a.out, *a.norm, a.norm_eps, a.norm_out);
}

}  // namespace ember
