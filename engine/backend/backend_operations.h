// SPDX-License-Identifier: MIT
// EMBER_BACKEND_OPERATION_OVERRIDES: the declarations of every operation a backend implements (Backend's pure
// do_* functions, backend/backend.h), written once for the CPU, Vulkan and HIP/CUDA backends' class bodies.
#pragma once

#include "backend/backend.h"

// clang-format off
#define EMBER_BACKEND_OPERATION_OVERRIDES                                                                          \
    void do_write(const Tensor& dst, std::span<const std::byte> src) override;                                     \
    void do_read(const Tensor& src, std::span<std::byte> dst) override;                                            \
    void do_get_rows(const Tensor& table, std::span<const int32_t> ids, const Tensor& out) override;                \
    void do_matmul(const Tensor& w, const Tensor& x, const Tensor& out, const Tensor* bias) override;               \
    void do_rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) override;                 \
    void do_layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps,                       \
                       const Tensor& out) override;                                                                \
    void do_add(const Tensor& a, const Tensor& b, const Tensor& out) override;                                     \
    void do_mul(const Tensor& a, const Tensor& b, const Tensor& out) override;                                     \
    void do_scale(const Tensor& x, float s, const Tensor& out) override;                                           \
    void do_gated_activation(Activation act, const Tensor& gate, const Tensor& up, const Tensor& out) override;    \
    void do_rope(const Tensor& x, int head_dim, std::span<const int32_t> positions, const RopeParams& p,           \
                 const Tensor* freq_factors) override;                                                             \
    void do_store_kv(const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,               \
                     std::span<const int32_t> positions) override;                                                 \
    void do_attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache, int64_t n_kv,                 \
                      std::span<const int32_t> positions, const AttentionParams& p, const Tensor& out) override;   \
    void do_softmax(const Tensor& x) override;                                                                     \
    void do_unary(UnaryOp op, const Tensor& x, const Tensor& out) override;                                        \
    void do_l2_norm(const Tensor& x, int head_dim, float eps, const Tensor& out) override;                         \
    void do_rms_norm_gated(const Tensor& x, const Tensor& weight, const Tensor& z, float eps,                      \
                           const Tensor& out) override;                                                            \
    void do_conv1d_causal(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out) override; \
    void do_delta_rule(const DeltaRuleArgs& args) override;                                                        \
    void do_moe_route(const Tensor& logits, int k, const Tensor& ids, const Tensor& weights) override;             \
    void do_matmul_experts(const Tensor& w, int64_t n_experts, const Tensor& x, const Tensor& ids,                 \
                           const Tensor& out) override;                                                            \
    void do_add_expert_bias(const Tensor& bias, const Tensor& ids, const Tensor& out) override;                    \
    void do_moe_combine(const Tensor& y, const Tensor& weights, const Tensor& out) override;                        \
    void do_convert(const Tensor& x, const Tensor& out) override;
// clang-format on
