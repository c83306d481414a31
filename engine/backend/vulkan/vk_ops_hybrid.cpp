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

void VulkanBackend::unary(UnaryOp op, const Tensor& x, const Tensor& out) {
    require_f32(x, "unary input");
    require_f32(out, "unary output");
    require_same_shape(x, out, "unary");
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

void VulkanBackend::l2_norm(const Tensor& x, int head_dim, float eps, const Tensor& out) {
    require_f32(x, "l2_norm input");
    require_same_shape(x, out, "l2_norm");
    require(head_dim > 0 && x.cols % head_dim == 0, "l2_norm: row length is not a multiple of the head size");
    normalize(Norm::l2, x, nullptr, nullptr, head_dim, eps, out);
}

void VulkanBackend::rms_norm_gated(const Tensor& x, const Tensor& weight, const Tensor& z, float eps,
                                   const Tensor& out) {
    require_f32(x, "gated rms_norm input");
    require_f32(weight, "gated rms_norm weight");
    require_f32(z, "gated rms_norm gate");
    require_same_shape(x, out, "gated rms_norm");
    require_same_shape(x, z, "gated rms_norm gate");
    require(weight.rows * weight.cols == x.cols, "gated rms_norm: weight length differs from the row length");
    normalize(Norm::rms_gated, x, &weight, &z, x.cols, eps, out);
}

void VulkanBackend::conv1d_causal(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out) {
    require_f32(x, "conv1d input");
    require_f32(weight, "conv1d weight");
    require_f32(state, "conv1d state");
    require_same_shape(x, out, "conv1d");
    const int64_t channels = x.cols, kernel = weight.cols;
    require(weight.rows == channels && kernel >= 1, "conv1d: weight must be [channels, kernel]");
    require(state.rows == kernel - 1 && state.cols == channels, "conv1d: state must be [kernel - 1, channels]");
    require(!(out.buffer == x.buffer && out.offset == x.offset) || kernel == 1, "conv1d: out must not alias the input");
    const View xv = stream_->view(x), wv = stream_->view(weight), ov = stream_->view(out);
    const View sv = kernel > 1 ? stream_->view(state) : stream_->unused();
    const ConvPush p{xv.words(), words(x.row_stride), wv.words(), words(weight.row_stride), sv.words(),
                     kernel > 1 ? words(state.row_stride) : 0, ov.words(), words(out.row_stride), u32(channels),
                     u32(kernel), u32(x.rows)};
    stream_->dispatch("conv1d", {ro(xv), ro(wv), rw(sv), rw(ov)}, p, Grid{u32((channels + 63) / 64), 1, 1});
}

void VulkanBackend::delta_rule(const DeltaRuleArgs& a) {
    const int64_t n = a.q.rows;
    require(a.n_k_heads > 0 && a.n_v_heads > 0 && a.d_k > 0 && a.d_v > 0, "delta_rule: bad head sizes");
    for (const Tensor* t : {&a.q, &a.k, &a.v, &a.g, &a.beta, &a.state, &a.out}) require_f32(*t, "delta_rule tensor");
    require(a.k.rows == n && a.v.rows == n && a.g.rows == n && a.beta.rows == n && a.out.rows == n,
            "delta_rule: every input needs one row per token");
    require(a.q.cols == int64_t{a.n_k_heads} * a.d_k && a.k.cols == a.q.cols, "delta_rule: q/k widths");
    require(a.v.cols == int64_t{a.n_v_heads} * a.d_v && a.out.cols == a.v.cols, "delta_rule: v/out widths");
    require(a.g.cols == a.n_v_heads && a.beta.cols == a.n_v_heads, "delta_rule: one g and beta per value head");
    const int64_t head_state = int64_t{a.d_k} * a.d_v;
    require(a.state.contiguous() && a.state.rows * a.state.cols == a.n_v_heads * head_state,
            "delta_rule: state must hold n_v_heads * d_k * d_v floats");
    require(a.chunk_size >= 0 && a.chunk_size <= 64, "delta_rule: chunk size must be 0 to 64");
    require(a.d_k <= kMaxDk, "delta_rule: the Vulkan kernel supports key heads of up to 128");
    const int64_t n_snap = a.snapshots ? a.snapshots->rows : 0;
    if (a.snapshots)
        require(a.snapshots->type == gguf::TensorType::F32 && a.snapshots->contiguous() && n_snap <= n &&
                    a.snapshots->cols == a.n_v_heads * head_state,
                "delta_rule: snapshots must be [K <= T, n_v_heads * d_k * d_v]");
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
