// SPDX-License-Identifier: MIT
// Row-wise and elementwise operations of the Vulkan backend (F32 activations): rms_norm, add, mul, scale, gated
// activations, softmax and rope.
#include <cmath>
#include <vector>

#include "backend/rope_angle.h"
#include "backend/vulkan/vulkan_backend.h"

namespace ember::vulkan {

namespace {

struct NormPush {
    uint32_t x_off, x_stride, w_off, out_off, out_stride, cols, rows;
    float eps;
    uint32_t segs, mode, z_off, z_stride, q_off, d_off;
};

struct ElementwisePush {
    uint32_t a_off, a_stride, b_off, b_stride, out_off, out_stride, cols, rows, op;
    float s;
    uint32_t b_step;
    uint32_t gate_off, gate_stride, c_off;  // deltanet gates (op 12) only
};

struct SoftmaxPush {
    uint32_t x_off, x_stride, cols, rows;
};

struct RopePush {
    uint32_t x_off, x_stride, table_off, rows, n_heads, head_dim, half_rot, neox;
};

// The most values a norm also writes as Q8_1: eight tokens of 8192 (the mat x vec paths take up to 8 tokens).
constexpr uint64_t kFusedQ8MaxValues = 8 * 8192;

}  // namespace

void VulkanBackend::normalize(Norm mode, const Tensor& x, const Tensor* weight, const Tensor* z, int64_t segment,
                              float eps, const Tensor& out) {
    const View xv = stream_->view(x), ov = stream_->view(out);
    const View wv = weight ? stream_->view(*weight) : stream_->unused();
    const View zv = z ? stream_->view(*z) : stream_->unused();
    NormPush p{};
    p.x_off = xv.words();
    p.x_stride = words(x.row_stride);
    p.w_off = wv.words();
    p.out_off = ov.words();
    p.out_stride = words(out.row_stride);
    p.cols = u32(segment);
    p.segs = u32(x.cols / segment);
    p.rows = u32(x.rows * (x.cols / segment));
    p.eps = eps;
    p.mode = static_cast<uint32_t>(mode);
    p.z_off = zv.words();
    p.z_stride = z ? words(z->row_stride) : 0;
    // Norms of whole hidden rows and gated norms of a few tokens feed mat x vec products next; with integer dot
    // products those read Q8_1, so the norm writes it too (a quantize dispatch and a barrier fewer per product).
    // Per-head norms (q/k) feed attention and are left alone.
    const bool feeds_product = mode == Norm::rms_gated ||
                               ((mode == Norm::rms || mode == Norm::add_rms) && segment == x.cols && x.cols >= 512);
    // The add of add_rms writes its sums back into x.
    const Arg x_arg = mode == Norm::add_rms ? rw(xv) : ro(xv);
    std::optional<Q8Slot> q8;
    if (integer_dot_ && feeds_product && segment % 32 == 0 && out.contiguous() &&
        static_cast<uint64_t>(out.rows) * static_cast<uint64_t>(out.cols) <= kFusedQ8MaxValues)
        q8 = reserve_q8_1(out.rows, out.cols);
    if (q8) {
        p.q_off = q8->q.codes_off;
        p.d_off = q8->q.scales_off;
        stream_->dispatch("rms_norm_q8", {x_arg, ro(wv), rw(ov), ro(zv), rw(q8->q.view)}, p, linear_grid(p.rows));
        remember_q8_1(out, ov, *q8);
        return;
    }
    stream_->dispatch("rms_norm", {x_arg, ro(wv), rw(ov), ro(zv)}, p, linear_grid(p.rows));
}

void VulkanBackend::do_add_rms_norm(const Tensor& x, const Tensor& y, const Tensor& weight, float eps,
                                    const Tensor& out) {
    normalize(Norm::add_rms, x, &weight, &y, x.cols, eps, out);
}

void VulkanBackend::do_rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) {
    normalize(Norm::rms, x, &weight, nullptr, x.cols, eps, out);
}

void VulkanBackend::do_layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps,
                                  const Tensor& out) {
    normalize(Norm::layer, x, &weight, &bias, x.cols, eps, out);
}

void VulkanBackend::elementwise(Elementwise op, const Tensor& a, const Tensor* b, float s, const Tensor& out,
                                const Tensor* gate, const Tensor* c) {
    const View av = stream_->view(a), ov = stream_->view(out);
    const View bv = b ? stream_->view(*b) : stream_->unused();
    const View gv = gate ? stream_->view(*gate) : stream_->unused(), cv = c ? stream_->view(*c) : stream_->unused();
    ElementwisePush p{};
    p.a_off = av.words();
    p.a_stride = words(a.row_stride);
    p.b_off = bv.words();
    p.b_stride = b && b->rows != 1 ? words(b->row_stride) : 0;
    p.b_step = b && b->cols == 1 && a.cols != 1 ? 0 : 1;
    p.out_off = ov.words();
    p.out_stride = words(out.row_stride);
    p.cols = u32(a.cols);
    p.rows = u32(a.rows);
    p.op = static_cast<uint32_t>(op);
    p.s = s;
    p.gate_off = gv.words();
    p.gate_stride = gate ? words(gate->row_stride) : 0;
    p.c_off = cv.words();
    const uint64_t n = static_cast<uint64_t>(a.rows) * static_cast<uint64_t>(a.cols);
    require(n <= UINT32_MAX, "elementwise: tensor too large");
    stream_->dispatch("elementwise", {ro(av), ro(bv), rw(ov), gate ? rw(gv) : ro(gv), ro(cv)}, p,
                      linear_grid((n + 255) / 256));
}

void VulkanBackend::do_deltanet_gates(const Tensor& beta, const Tensor& alpha, const Tensor& dt_bias,
                                      const Tensor& a) {
    elementwise(Elementwise::deltanet_gates, alpha, &dt_bias, 0.0f, alpha, &beta, &a);
}

void VulkanBackend::do_add(const Tensor& a, const Tensor& b, const Tensor& out) {
    elementwise(Elementwise::add, a, &b, 0.0f, out);
}

void VulkanBackend::do_mul(const Tensor& a, const Tensor& b, const Tensor& out) {
    elementwise(Elementwise::mul, a, &b, 0.0f, out);
}

void VulkanBackend::do_scale(const Tensor& x, float s, const Tensor& out) {
    elementwise(Elementwise::scale, x, nullptr, s, out);
}

void VulkanBackend::do_gated_activation(Activation act, const Tensor& gate, const Tensor& up, const Tensor& out) {
    const Elementwise op = act == Activation::silu   ? Elementwise::swiglu
                           : act == Activation::gelu ? Elementwise::geglu
                                                     : Elementwise::swiglu_clamped;
    elementwise(op, gate, &up, 0.0f, out);
}

void VulkanBackend::do_softmax(const Tensor& x) {
    const View xv = stream_->view(x);
    const SoftmaxPush p{xv.words(), words(x.row_stride), u32(x.cols), u32(x.rows)};
    stream_->dispatch("softmax", {rw(xv)}, p, linear_grid(static_cast<uint64_t>(x.rows)));
}

void VulkanBackend::do_rope(const Tensor& x, int head_dim, std::span<const int32_t> positions, const RopeParams& p,
                            const Tensor* freq_factors) {
    const int half = p.n_rot / 2;
    std::vector<float> factors;
    if (freq_factors) {
        // Frequency factors are weights: read them back once, not at every call (a read waits for the GPU).
        std::vector<float>& cached = rope_factors_[{freq_factors->buffer, freq_factors->offset}];
        if (cached.size() != static_cast<size_t>(half)) {
            cached.resize(static_cast<size_t>(half));
            read(*freq_factors, std::as_writable_bytes(std::span(cached)));
        }
        factors = cached;
    }
    // The angles in double, as the CPU backend computes them: float sin/cos on the GPU are far too coarse.
    const size_t rows = static_cast<size_t>(x.rows);
    std::vector<float> table(rows * static_cast<size_t>(half) * 2);
    for (size_t r = 0; r < rows; ++r) {
        for (int i = 0; i < half; ++i) {
            const double theta =
                rope_angle::theta(p, i, positions, rows, r, factors.empty() ? nullptr : factors.data());
            table[(r * static_cast<size_t>(half) + static_cast<size_t>(i)) * 2] = static_cast<float>(std::cos(theta));
            table[(r * static_cast<size_t>(half) + static_cast<size_t>(i)) * 2 + 1] =
                static_cast<float>(std::sin(theta));
        }
    }
    const View xv = stream_->view(x);
    const View tv = stream_->upload(std::span<const float>(table));
    const RopePush push{xv.words(), words(x.row_stride), tv.words(), u32(x.rows), u32(x.cols / head_dim),
                        u32(head_dim), u32(half), p.mode == RopeMode::normal ? 0u : 1u};
    const uint64_t n = static_cast<uint64_t>(x.rows) * static_cast<uint64_t>(x.cols / head_dim) * half;
    stream_->dispatch("rope", {rw(xv), ro(tv)}, push, linear_grid((n + 255) / 256));
}

}  // namespace ember::vulkan
