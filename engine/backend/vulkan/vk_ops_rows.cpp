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
    const bool feeds_product = mode == Norm::rms_gated || (mode == Norm::rms && segment == x.cols && x.cols >= 512);
    std::optional<Q8Slot> q8;
    if (integer_dot_ && feeds_product && segment % 32 == 0 && out.contiguous() &&
        static_cast<uint64_t>(out.rows) * static_cast<uint64_t>(out.cols) <= kFusedQ8MaxValues)
        q8 = reserve_q8_1(out.rows, out.cols);
    if (q8) {
        p.q_off = q8->q.codes_off;
        p.d_off = q8->q.scales_off;
        stream_->dispatch("rms_norm_q8", {ro(xv), ro(wv), rw(ov), ro(zv), rw(q8->q.view)}, p, linear_grid(p.rows));
        remember_q8_1(out, ov, *q8);
        return;
    }
    stream_->dispatch("rms_norm", {ro(xv), ro(wv), rw(ov), ro(zv)}, p, linear_grid(p.rows));
}

void VulkanBackend::rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) {
    require_f32(x, "rms_norm input");
    require_f32(weight, "rms_norm weight");
    require_same_shape(x, out, "rms_norm");
    require(weight.rows * weight.cols == x.cols, "rms_norm: weight length differs from the row length");
    normalize(Norm::rms, x, &weight, nullptr, x.cols, eps, out);
}

void VulkanBackend::layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps,
                               const Tensor& out) {
    require_f32(x, "layer_norm input");
    require_f32(weight, "layer_norm weight");
    require_f32(bias, "layer_norm bias");
    require_f32(out, "layer_norm output");
    require_same_shape(x, out, "layer_norm");
    require(weight.rows * weight.cols == x.cols && bias.rows * bias.cols == x.cols,
            "layer_norm: weight or bias length differs from the row length");
    normalize(Norm::layer, x, &weight, &bias, x.cols, eps, out);
}

void VulkanBackend::elementwise(Elementwise op, const Tensor& a, const Tensor* b, float s, const Tensor& out) {
    const View av = stream_->view(a), ov = stream_->view(out);
    const View bv = b ? stream_->view(*b) : stream_->unused();
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
    const uint64_t n = static_cast<uint64_t>(a.rows) * static_cast<uint64_t>(a.cols);
    require(n <= UINT32_MAX, "elementwise: tensor too large");
    stream_->dispatch("elementwise", {ro(av), ro(bv), rw(ov)}, p, linear_grid((n + 255) / 256));
}

void VulkanBackend::add(const Tensor& a, const Tensor& b, const Tensor& out) {
    require_f32(a, "add input");
    require_f32(b, "add input");
    require_same_shape(a, out, "add");
    require(b.cols == a.cols && (b.rows == a.rows || b.rows == 1), "add: operand shapes differ");
    elementwise(Elementwise::add, a, &b, 0.0f, out);
}

void VulkanBackend::mul(const Tensor& a, const Tensor& b, const Tensor& out) {
    require_f32(a, "mul input");
    require_f32(b, "mul input");
    require_same_shape(a, out, "mul");
    const bool column = b.cols == 1 && b.rows == a.rows && a.cols != 1;
    require(column || (b.cols == a.cols && (b.rows == a.rows || b.rows == 1)), "mul: operand shapes differ");
    elementwise(Elementwise::mul, a, &b, 0.0f, out);
}

void VulkanBackend::scale(const Tensor& x, float s, const Tensor& out) {
    require_f32(x, "scale input");
    require_same_shape(x, out, "scale");
    elementwise(Elementwise::scale, x, nullptr, s, out);
}

void VulkanBackend::gated_activation(Activation act, const Tensor& gate, const Tensor& up, const Tensor& out) {
    require_f32(gate, "gated activation gate");
    require_f32(up, "gated activation up");
    require_same_shape(gate, up, "gated activation");
    require_same_shape(gate, out, "gated activation");
    const Elementwise op = act == Activation::silu   ? Elementwise::swiglu
                           : act == Activation::gelu ? Elementwise::geglu
                                                     : Elementwise::swiglu_clamped;
    elementwise(op, gate, &up, 0.0f, out);
}

void VulkanBackend::softmax(const Tensor& x) {
    require_f32(x, "softmax input");
    const View xv = stream_->view(x);
    const SoftmaxPush p{xv.words(), words(x.row_stride), u32(x.cols), u32(x.rows)};
    stream_->dispatch("softmax", {rw(xv)}, p, linear_grid(static_cast<uint64_t>(x.rows)));
}

void VulkanBackend::rope(const Tensor& x, int head_dim, std::span<const int32_t> positions, const RopeParams& p,
                         const Tensor* freq_factors) {
    require_f32(x, "rope input");
    const size_t per_row = rope_angle::positions_per_row(p.mode);
    require(positions.size() == static_cast<size_t>(x.rows) * per_row,
            per_row == 3   ? "rope: three positions (t, h, w) per row"
            : per_row == 2 ? "rope: two positions (row, col) per row"
                           : "rope: one position per row");
    require(head_dim > 0 && x.cols % head_dim == 0, "rope: row length is not a multiple of the head size");
    require(rope_angle::valid_n_rot(p, head_dim), "rope: bad rotary dimension count");
    const int half = p.n_rot / 2;
    std::vector<float> factors;
    if (freq_factors) {
        require_f32(*freq_factors, "rope frequency factors");
        require(freq_factors->rows * freq_factors->cols == half, "rope: need n_rot/2 frequency factors");
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
