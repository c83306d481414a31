// SPDX-License-Identifier: MIT
// Operations of hybrid (Gated DeltaNet) models on the Vulkan backend: unary activations, per-head L2 norm, the
// gated RMS norm, the causal convolution with its state, and the gated delta rule.
#include "backend/vulkan/vulkan_backend.h"

namespace ember::vulkan {

namespace {

struct ConvPush {
    uint32_t x_off, x_stride, w_off, w_stride, s_off, s_stride, out_off, out_stride, channels, kernel, tokens;
};

struct DeltaPush {
    uint32_t q_off, q_stride, k_off, k_stride;
    uint32_t v_off, v_stride, g_off, g_stride, beta_off, beta_stride;
    uint32_t s_off, out_off, out_stride, snap_off, snap_stride;
    uint32_t tokens, n_snap, n_k_heads, n_v_heads, d_k, d_v;
    float q_scale;
};

constexpr int kMaxDk = 128;  // delta_rule.comp keeps a state column in registers
constexpr uint32_t kDeltaLanes = 8;  // invocations per state column of delta_rule_lanes8

}  // namespace

void VulkanBackend::do_unary(UnaryOp op, const Tensor& x, const Tensor& out) {
    Elementwise e = Elementwise::silu;
    switch (op) {
        case UnaryOp::silu: e = Elementwise::silu; break;
        case UnaryOp::sigmoid: e = Elementwise::sigmoid; break;
        case UnaryOp::softplus: e = Elementwise::softplus; break;
        case UnaryOp::exp: e = Elementwise::exp; break;
        case UnaryOp::gelu_tanh:
            e = Elementwise::gelu_tanh;
            break;
        case UnaryOp::gelu_erf:
            e = Elementwise::gelu_erf;
            break;
    }
    elementwise(e, x, nullptr, 0.0f, out);
}

void VulkanBackend::do_l2_norm(const Tensor& x, int head_dim, float eps, const Tensor& out) {
    normalize(Norm::l2, x, nullptr, nullptr, head_dim, eps, out);
}

void VulkanBackend::do_rms_norm_gated(const Tensor& x, const Tensor& weight, const Tensor& z, float eps,
                                      const Tensor& out) {
    normalize(Norm::rms_gated, x, &weight, &z, x.cols, eps, out);
}

void VulkanBackend::do_conv1d_causal(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out) {
    const int64_t channels = x.cols, kernel = weight.cols;
    const View xv = stream_->view(x), wv = stream_->view(weight), ov = stream_->view(out);
    const View sv = kernel > 1 ? stream_->view(state) : stream_->unused();
    const ConvPush p{xv.words(), words(x.row_stride), wv.words(), words(weight.row_stride), sv.words(),
                     kernel > 1 ? words(state.row_stride) : 0, ov.words(), words(out.row_stride), u32(channels),
                     u32(kernel), u32(x.rows)};
    stream_->dispatch("conv1d", {ro(xv), ro(wv), rw(sv), rw(ov)}, p, Grid{u32((channels + 63) / 64), 1, 1});
}

void VulkanBackend::do_delta_rule(const DeltaRuleArgs& a) {
    const int64_t n = a.q.rows;
    require(a.d_k <= kMaxDk, "delta_rule: the Vulkan kernel supports key heads of up to 128");
    const int64_t n_snap = a.snapshots ? a.snapshots->rows : 0;
    if (n == 0) return;
    const View qv = stream_->view(a.q), kv = stream_->view(a.k), vv = stream_->view(a.v);
    const View gv = stream_->view(a.g), bv = stream_->view(a.beta);
    const View sv = stream_->view(a.state), ov = stream_->view(a.out);
    const View snap = a.snapshots ? stream_->view(*a.snapshots) : stream_->unused();
    DeltaPush p{};
    p.q_off = qv.words();
    p.q_stride = words(a.q.row_stride);
    p.k_off = kv.words();
    p.k_stride = words(a.k.row_stride);
    p.v_off = vv.words();
    p.v_stride = words(a.v.row_stride);
    p.g_off = gv.words();
    p.g_stride = words(a.g.row_stride);
    p.beta_off = bv.words();
    p.beta_stride = words(a.beta.row_stride);
    p.s_off = sv.words();
    p.out_off = ov.words();
    p.out_stride = words(a.out.row_stride);
    p.snap_off = snap.words();
    p.snap_stride = a.snapshots ? words(a.snapshots->row_stride) : 0;
    p.tokens = u32(n);
    p.n_snap = u32(n_snap);
    p.n_k_heads = u32(a.n_k_heads);
    p.n_v_heads = u32(a.n_v_heads);
    p.d_k = u32(a.d_k);
    p.d_v = u32(a.d_v);
    p.q_scale = a.q_scale;
    // The recurrent form for every chunk size (the result is the chunked form's to rounding; the op suite checks
    // both against one reference): kDeltaLanes invocations per state column where subgroup shuffles can sum
    // over them, else one.
    const uint32_t lanes = ctx_->shuffle_width() >= kDeltaLanes ? kDeltaLanes : 1;
    const int64_t invocations = int64_t{a.n_v_heads} * a.d_v * lanes;
    stream_->dispatch(lanes > 1 ? "delta_rule_lanes8" : "delta_rule",
                      {ro(qv), ro(kv), ro(vv), ro(gv), ro(bv), rw(sv), rw(ov), rw(snap)}, p,
                      linear_grid(static_cast<uint64_t>((invocations + 63) / 64)));
}

}  // namespace ember::vulkan
