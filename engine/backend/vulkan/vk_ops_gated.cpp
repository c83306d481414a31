// SPDX-License-Identifier: MIT
// Gated feed-forward products for decode: act(x W_gate^T, x W_up^T) in one dispatch (the GATED variants of
// matvec_dot.comp and matvec_blocks.comp), reading the activations (quantized to Q8_1 once, where the device has
// integer dot products) once for both products, instead of two products and an elementwise pass. Prefill, weight
// types without block kernels and weights too large to bind at once take Backend's composition of the plain ops.
#include <algorithm>

#include "backend/vulkan/vulkan_backend.h"

namespace ember::vulkan {

namespace {

// MatvecPush followed by the GATED kernels' own constants.
struct GatedPush {
    MatvecPush m;
    uint32_t w_up_off;  // bytes into binding 5
    uint32_t act;       // act_code
};
static_assert(sizeof(GatedPush) == sizeof(MatvecPush) + 8, "GatedPush must follow MatvecPush without padding");


// common.glsl's gated_act codes.
uint32_t act_code(Activation act) {
    switch (act) {
        case Activation::silu: return 0;
        case Activation::gelu: return 1;
        case Activation::swiglu_clamped: return 2;
    }
    return 0;
}

bool same_layout(const Tensor& a, const Tensor& b) {
    return a.type == b.type && a.rows == b.rows && a.cols == b.cols && a.row_stride == b.row_stride;
}

bool is_f32_rows(const Tensor& t) { return t.type == gguf::TensorType::F32 && t.contiguous(); }

}  // namespace

void VulkanBackend::do_matmul_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, const Tensor& x,
                                    const Tensor& up_scratch, const Tensor& out) {
    // Anything the fused kernel does not take, shape mistakes included, goes to the composition (which reports
    // the mistakes as the plain ops do).
    const uint64_t max_range = ctx_->limits().maxStorageBufferRange;
    const bool fusable = x.rows >= 1 && x.rows <= kMatvecMaxTokens && same_layout(w_gate, w_up) &&
                         is_f32_rows(x) && is_f32_rows(out) && x.cols == w_gate.cols && out.rows == x.rows &&
                         out.cols == w_gate.rows && up_scratch.rows == out.rows && up_scratch.cols == out.cols &&
                         up_scratch.type == gguf::TensorType::F32 && w_gate.bytes() + 256 <= max_range &&
                         w_up.bytes() + 256 <= max_range;
    if (!fusable) return Backend::do_matmul_gated(act, w_gate, w_up, x, up_scratch, out);
    const std::string type = type_name(w_gate.type);
    std::optional<Q8Activations> xq;
    if (integer_dot_ && pipelines_->has("matvec_dot_gated_" + type)) xq = quantize_q8_1(x);
    if (!xq && !pipelines_->has("matvec_blocks_gated_" + type))
        return Backend::do_matmul_gated(act, w_gate, w_up, x, up_scratch, out);

    const View gv = stream_->view(w_gate), uv = stream_->view(w_up), xv = stream_->view(x), ov = stream_->view(out);
    const View none = stream_->unused();
    GatedPush p{};
    address_product(p.m, gv, w_gate, xv, x, ov, out);
    p.m.tokens = u32(x.rows);
    p.w_up_off = uv.inner;
    p.act = act_code(act);
    const uint64_t groups = block_matvec_groups(p.m, w_gate.cols, w_gate.rows, xq ? &*xq : nullptr);
    if (xq)
        stream_->dispatch("matvec_dot_gated_" + type, {ro(gv), ro(xq->view), rw(ov), ro(none), ro(none), ro(uv)}, p,
                          linear_grid(groups));
    else
        stream_->dispatch("matvec_blocks_gated_" + type, {ro(gv), ro(xv), rw(ov), ro(none), ro(none), ro(uv)}, p,
                          linear_grid(groups));
    counters_.weight_bytes += 2 * static_cast<uint64_t>(w_gate.rows) * w_gate.row_stride;
}

void VulkanBackend::do_matmul_experts_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, int64_t n_experts,
                                            const Tensor& x, const Tensor& ids, const Tensor& up_scratch,
                                            const Tensor& out) {
    const uint64_t max_range = ctx_->limits().maxStorageBufferRange;
    const int64_t n_tokens = ids.rows, k = ids.cols, slots = n_tokens * k;
    const bool shapes = n_experts > 0 && w_gate.rows % n_experts == 0 && ids.type == gguf::TensorType::I32 &&
                        is_f32_rows(x) && is_f32_rows(out) && x.cols == w_gate.cols &&
                        (x.rows == n_tokens || x.rows == slots) && out.rows == slots &&
                        out.cols == w_gate.rows / std::max<int64_t>(n_experts, 1) && up_scratch.rows == out.rows &&
                        up_scratch.cols == out.cols && up_scratch.type == gguf::TensorType::F32;
    const bool fusable = shapes && slots >= 1 && slots < kGroupedMinSlots && same_layout(w_gate, w_up) &&
                         w_gate.bytes() + 256 <= max_range && w_up.bytes() + 256 <= max_range;
    if (!fusable) return Backend::do_matmul_experts_gated(act, w_gate, w_up, n_experts, x, ids, up_scratch, out);
    const std::string type = type_name(w_gate.type);
    std::optional<Q8Activations> xq;
    if (integer_dot_ && pipelines_->has("experts_dot_gated_" + type)) xq = quantize_q8_1(x);
    if (!xq && !pipelines_->has("experts_blocks_gated_" + type))
        return Backend::do_matmul_experts_gated(act, w_gate, w_up, n_experts, x, ids, up_scratch, out);

    const int64_t rows = w_gate.rows / n_experts;
    const View gv = stream_->view(w_gate), uv = stream_->view(w_up), xv = stream_->view(x), ov = stream_->view(out),
               iv = stream_->view(ids);
    const View none = stream_->unused();
    GatedPush p{};
    address_product(p.m, gv, w_gate, xv, x, ov, out);
    address_expert_slots(p.m, iv, ids, rows, x);
    p.w_up_off = uv.inner;
    p.act = act_code(act);
    const uint64_t groups = block_matvec_groups(p.m, w_gate.cols, rows, xq ? &*xq : nullptr);
    // Each slot reads one gate and one up matrix, or (grouped) each expert that can have slots does once.
    int64_t matrices_read = slots;
    if (xq) {
        ExpertsDotPush d{p.m, p.w_up_off, p.act, 0, 0, 0, 0};
        const auto [grid, slots_view] = experts_dot_slots(d, iv, ids, n_experts, groups);
        stream_->dispatch((d.grouped ? "experts_grouped_dot_gated_" : "experts_dot_gated_") + type,
                          {ro(gv), ro(xq->view), rw(ov), ro(none), ro(slots_view), ro(uv)}, d, grid);
        if (d.grouped) matrices_read = std::min(slots, n_experts);
    } else {
        stream_->dispatch("experts_blocks_gated_" + type, {ro(gv), ro(xv), rw(ov), ro(none), ro(iv), ro(uv)}, p,
                          Grid{u32(static_cast<int64_t>(groups)), u32(slots), 1});
    }
    count_expert_reads(2 * matrices_read, rows, w_gate.row_stride);
}

}  // namespace ember::vulkan
