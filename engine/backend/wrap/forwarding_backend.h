// SPDX-License-Identifier: MIT
// A backend that passes every call to another one: the base of wrappers that change a few operations (the host
// experts placement, the injected device failure of tests).
#pragma once

#include <memory>

#include "backend/backend.h"

namespace ember {

class ForwardingBackend : public Backend {
public:
    explicit ForwardingBackend(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}

    std::string name() const override { return inner_->name(); }
    std::unique_ptr<Buffer> allocate(size_t bytes) override { return inner_->allocate(bytes); }
    std::unique_ptr<Buffer> map_weights(std::span<const std::byte> bytes) override {
        return inner_->map_weights(bytes);
    }
    std::unique_ptr<Buffer> map_expert_weights(std::span<const std::byte> bytes) override {
        return inner_->map_expert_weights(bytes);
    }
    void synchronize() override { inner_->synchronize(); }
    BackendCounters counters() const override { return inner_->counters(); }

protected:
    // Each operation goes to the inner backend's entry point (checked there again: the checks are cheap).
    void do_write(const Tensor& dst, std::span<const std::byte> src) override { inner_->write(dst, src); }
    void do_read(const Tensor& src, std::span<std::byte> dst) override { inner_->read(src, dst); }

    void do_get_rows(const Tensor& table, std::span<const int32_t> ids, const Tensor& out) override {
        before_operation();
        inner_->get_rows(table, ids, out);
    }
    void do_matmul(const Tensor& w, const Tensor& x, const Tensor& out, const Tensor* bias) override {
        before_operation();
        inner_->matmul(w, x, out, bias);
    }
    void do_rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) override {
        before_operation();
        inner_->rms_norm(x, weight, eps, out);
    }
    void do_add_rms_norm(const Tensor& x, const Tensor& y, const Tensor& weight, float eps,
                         const Tensor& out) override {
        before_operation();
        inner_->add_rms_norm(x, y, weight, eps, out);
    }
    void do_layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps,
                       const Tensor& out) override {
        before_operation();
        inner_->layer_norm(x, weight, bias, eps, out);
    }
    void do_add(const Tensor& a, const Tensor& b, const Tensor& out) override {
        before_operation();
        inner_->add(a, b, out);
    }
    void do_mul(const Tensor& a, const Tensor& b, const Tensor& out) override {
        before_operation();
        inner_->mul(a, b, out);
    }
    void do_scale(const Tensor& x, float s, const Tensor& out) override {
        before_operation();
        inner_->scale(x, s, out);
    }
    void do_gated_activation(Activation act, const Tensor& gate, const Tensor& up, const Tensor& out) override {
        before_operation();
        inner_->gated_activation(act, gate, up, out);
    }
    void do_rope(const Tensor& x, int head_dim, std::span<const int32_t> positions, const RopeParams& p,
                 const Tensor* freq_factors) override {
        before_operation();
        inner_->rope(x, head_dim, positions, p, freq_factors);
    }
    void do_store_kv(const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,
                     std::span<const int32_t> positions) override {
        before_operation();
        inner_->store_kv(k, v, k_cache, v_cache, positions);
    }
    void do_attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache, int64_t n_kv,
                      std::span<const int32_t> positions, const AttentionParams& p, const Tensor& out) override {
        before_operation();
        inner_->attention(q, k_cache, v_cache, n_kv, positions, p, out);
    }
    void do_softmax(const Tensor& x) override {
        before_operation();
        inner_->softmax(x);
    }
    void do_unary(UnaryOp op, const Tensor& x, const Tensor& out) override {
        before_operation();
        inner_->unary(op, x, out);
    }
    void do_l2_norm(const Tensor& x, int head_dim, float eps, const Tensor& out) override {
        before_operation();
        inner_->l2_norm(x, head_dim, eps, out);
    }
    void do_rms_norm_gated(const Tensor& x, const Tensor& weight, const Tensor& z, float eps,
                           const Tensor& out) override {
        before_operation();
        inner_->rms_norm_gated(x, weight, z, eps, out);
    }
    void do_conv1d_causal(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out) override {
        before_operation();
        inner_->conv1d_causal(x, weight, state, out);
    }
    void do_conv1d_causal_silu(const Tensor& x, const Tensor& weight, const Tensor& state,
                               const Tensor& out) override {
        before_operation();
        inner_->conv1d_causal_silu(x, weight, state, out);
    }
    void do_deltanet_gates(const Tensor& beta, const Tensor& alpha, const Tensor& dt_bias, const Tensor& a) override {
        before_operation();
        inner_->deltanet_gates(beta, alpha, dt_bias, a);
    }
    void do_delta_rule(const DeltaRuleArgs& args) override {
        before_operation();
        inner_->delta_rule(args);
    }
    void do_deltanet_recurrent(const DeltaNetArgs& a) override {
        before_operation();
        inner_->deltanet_recurrent(a);
    }
    void do_moe_route(const Tensor& logits, int k, const Tensor& ids, const Tensor& weights) override {
        before_operation();
        inner_->moe_route(logits, k, ids, weights);
    }
    void do_matmul_experts(const Tensor& w, int64_t n_experts, const Tensor& x, const Tensor& ids,
                           const Tensor& out) override {
        before_operation();
        inner_->matmul_experts(w, n_experts, x, ids, out);
    }
    void do_matmul_many(const Tensor& x, std::span<const Product> products) override {
        before_operation();
        inner_->matmul_many(x, products);
    }
    void do_matmul_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, const Tensor& x,
                         const Tensor& up_scratch, const Tensor& out) override {
        before_operation();
        inner_->matmul_gated(act, w_gate, w_up, x, up_scratch, out);
    }
    void do_matmul_experts_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, int64_t n_experts,
                                 const Tensor& x, const Tensor& ids, const Tensor& up_scratch,
                                 const Tensor& out) override {
        before_operation();
        inner_->matmul_experts_gated(act, w_gate, w_up, n_experts, x, ids, up_scratch, out);
    }
    void do_add_expert_bias(const Tensor& bias, const Tensor& ids, const Tensor& out) override {
        before_operation();
        inner_->add_expert_bias(bias, ids, out);
    }
    void do_moe_combine(const Tensor& y, const Tensor& weights, const Tensor& out) override {
        before_operation();
        inner_->moe_combine(y, weights, out);
    }
    void do_moe_combine_shared(const Tensor& y, const Tensor& weights, const Tensor& shared, const Tensor& gate,
                               const Tensor& out) override {
        before_operation();
        inner_->moe_combine_shared(y, weights, shared, gate, out);
    }
    void do_moe_down_combine(const MoeDownArgs& a) override {
        before_operation();
        inner_->moe_down_combine(a);
    }
    void do_moe_gate_up(const MoeGateUpArgs& a) override {
        before_operation();
        inner_->moe_gate_up(a);
    }
    void do_moe_router(const MoeRouterArgs& a) override {
        before_operation();
        inner_->moe_router(a);
    }
    void do_matmul_add_rms_norm(const Tensor& w, const Tensor& x, const Tensor& out, const Tensor* bias,
                                const Tensor& residual, const Tensor& norm, float eps,
                                const Tensor& norm_out) override {
        before_operation();
        inner_->matmul_add_rms_norm(w, x, out, bias, residual, norm, eps, norm_out);
    }
    void do_convert(const Tensor& x, const Tensor& out) override {
        before_operation();
        inner_->convert(x, out);
    }

    Backend& inner() const { return *inner_; }
    // Called before every operation is passed on (not for memory transfers).
    virtual void before_operation() {}

private:
    std::unique_ptr<Backend> inner_;
};

}  // namespace ember
