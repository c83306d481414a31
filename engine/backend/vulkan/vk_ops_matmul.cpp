// SPDX-License-Identifier: MIT
// Weight x activation products and row gathers. Up to 8 activation rows take the matrix x vector kernels (the
// weights are read once for all rows: decode, speculative verification); more take the tiled prefill kernel.
// A weight larger than the device can bind at once is processed in row slices. Where the device has integer dot
// products, the matrix x vector of the 4- and 8-bit block types quantizes the activations to Q8_1 first
// (one dispatch, skipped when the same activations were quantized since they last changed) and runs matvec_dot.
#include <algorithm>
#include <cstdlib>

#include "backend/vulkan/vulkan_backend.h"

namespace ember::vulkan {

namespace {

struct QuantizePush {
    uint32_t x_off, x_stride, rows, cols, q_off, d_off;
};

struct GetRowsPush {
    uint32_t table_off, table_stride, ids_off, out_off, out_stride, cols, rows;
};

}  // namespace

void address_product(ProductAddress& p, const View& wv, const Tensor& w, const View& xv, const Tensor& x,
                     const View& ov, const Tensor& out) {
    p.w_off = wv.inner;
    p.w_stride = u32(static_cast<int64_t>(w.row_stride));
    p.x_off = xv.words();
    p.x_stride = words(x.row_stride);
    p.out_off = ov.words();
    p.out_stride = words(out.row_stride);
    p.cols = u32(w.cols);
    p.rows = u32(w.rows);
}

void address_expert_slots(MatvecPush& p, const View& iv, const Tensor& ids, int64_t expert_rows, const Tensor& x) {
    const int64_t k = ids.cols;
    p.tokens = 1;
    p.ids_off = iv.words();
    p.ids_stride = words(ids.row_stride);
    p.k = u32(k);
    p.expert_rows = u32(expert_rows);
    p.per_slot = x.rows == ids.rows * k && k > 1 ? 1 : 0;
}

uint64_t VulkanBackend::block_matvec_groups(MatvecPush& p, int64_t cols, int64_t rows, const Q8Activations* xq) {
    // Four invocations per 32-weight block, 8 to kMaxRowLanes per row (EMBER_VULKAN_ROW_LANES: a lower bound on the
    // rows per work group, for measuring).
    static const uint32_t max_lanes = [] {
        const char* v = std::getenv("EMBER_VULKAN_ROW_LANES");
        const long lanes = v ? std::strtol(v, nullptr, 10) : 0;
        return lanes >= 8 && lanes <= 128 && (lanes & (lanes - 1)) == 0 ? static_cast<uint32_t>(lanes) : kMaxRowLanes;
    }();
    const int64_t quarters = 4 * std::max<int64_t>(1, cols / 32);
    p.row_lanes = 8;
    while (p.row_lanes < max_lanes && p.row_lanes < quarters) p.row_lanes *= 2;
    if (xq) {
        p.x_off = xq->codes_off;
        p.x_stride = xq->blocks_per_row;
        p.x_scales = xq->scales_off;
    } else {
        p.x_vec4 = p.x_off % 4 == 0 && p.x_stride % 4 == 0;
    }
    const uint64_t rows_per_group = 128 / p.row_lanes;
    return (static_cast<uint64_t>(rows) + rows_per_group - 1) / rows_per_group;
}

std::optional<VulkanBackend::Q8Activations> VulkanBackend::reusable_q8_1(const Tensor& x, const View& xv) const {
    // Contiguous rows have one Q8_1 layout whatever their shape ([tokens x heads, head] or [tokens, row]).
    const auto same_layout = [&](const Q8Reuse& r) {
        if (r.rows == x.rows && r.cols == x.cols && r.row_stride == x.row_stride) return true;
        return x.contiguous() && r.row_stride == static_cast<size_t>(r.cols) * 4 && r.rows * r.cols == x.rows * x.cols &&
               x.cols % 32 == 0 && r.cols % 32 == 0;
    };
    for (const Q8Reuse& r : q8_reuse_)
        if (r.x.buffer == xv.buffer && r.x.offset == xv.offset && r.x.range == xv.range && r.x.inner == xv.inner &&
            same_layout(r) && stream_->unchanged_since(xv, r.mark)) {
            Q8Activations q = r.slot.q;
            q.blocks_per_row = u32(x.cols / 32);
            return q;
        }
    return std::nullopt;
}

std::optional<VulkanBackend::Q8Slot> VulkanBackend::reserve_q8_1(int64_t rows, int64_t cols) {
    const uint64_t blocks = static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols / 32);
    const uint64_t needed = (blocks * 40 + 255) / 256 * 256;  // 32 code bytes and (d, s) per block
    if (needed > ctx_->limits().maxStorageBufferRange / 2) return std::nullopt;
    if (needed > q8_capacity_) {
        q8_reuse_.clear();
        // Grow by at least half, so that a run of slightly larger calls does not reallocate each time. The old
        // buffer's destructor first runs the work recorded with it.
        const size_t grown = (q8_capacity_ + q8_capacity_ / 2 + 255) / 256 * 256;
        q8_capacity_ = std::max<size_t>({needed, grown, kQ8MinBytes});
        q8_scratch_ = make_buffer(q8_capacity_);
        q8_next_ = 0;
    }
    if (q8_next_ + needed > q8_capacity_) q8_next_ = 0;
    Q8Slot slot;
    slot.ring_begin = q8_next_;
    slot.ring_end = q8_next_ + needed;
    std::erase_if(q8_reuse_, [&](const Q8Reuse& r) {
        return r.slot.ring_begin < slot.ring_end && slot.ring_begin < r.slot.ring_end;
    });
    Tensor region;
    region.buffer = q8_scratch_.get();
    region.offset = q8_next_;
    region.rows = 1;
    region.cols = static_cast<int64_t>(needed / 4);
    region.row_stride = needed;
    q8_next_ += needed;
    slot.q.view = stream_->view(region);
    slot.q.blocks_per_row = u32(cols / 32);
    slot.q.codes_off = slot.q.view.words();
    slot.q.scales_off = u32(static_cast<int64_t>((slot.q.view.inner + blocks * 32) / 8));
    return slot;
}

void VulkanBackend::remember_q8_1(const Tensor& x, const View& xv, const Q8Slot& slot) {
    constexpr size_t kReuseEntries = 8;
    if (q8_reuse_.size() == kReuseEntries) q8_reuse_.erase(q8_reuse_.begin());
    q8_reuse_.push_back({xv, x.rows, x.cols, x.row_stride, stream_->mark(), slot});
}

std::optional<VulkanBackend::Q8Activations> VulkanBackend::quantize_q8_1(const Tensor& x) {
    const View xv = stream_->view(x);
    if (std::optional<Q8Activations> q = reusable_q8_1(x, xv)) return q;
    const std::optional<Q8Slot> slot = reserve_q8_1(x.rows, x.cols);
    if (!slot) return std::nullopt;
    const Q8Activations& q = slot->q;
    const uint64_t blocks = static_cast<uint64_t>(x.rows) * static_cast<uint64_t>(x.cols / 32);
    const QuantizePush p{xv.words(), words(x.row_stride), u32(x.rows), u32(x.cols), q.codes_off, q.scales_off};
    stream_->dispatch("quantize_q8_1", {ro(xv), rw(q.view)}, p, linear_grid((blocks * 8 + 255) / 256));
    remember_q8_1(x, xv, *slot);
    return q;
}

void VulkanBackend::do_matmul(const Tensor& w, const Tensor& x, const Tensor& out, const Tensor* bias) {
    if (bias) {
    }
    const std::string type = type_name(w.type);
    const View xv = stream_->view(x), ov = stream_->view(out);
    const View bv = bias ? stream_->view(*bias) : stream_->unused();

    counters_.weight_bytes += static_cast<uint64_t>(w.rows) * w.row_stride;
    std::optional<Q8Activations> xq;
    if (integer_dot_ && x.rows <= kChunkedMatvecMaxTokens && pipelines_->has("matvec_dot_" + type))
        xq = quantize_q8_1(x);
    const size_t max_rows_bound = std::max<size_t>(1, ctx_->limits().maxStorageBufferRange / w.row_stride - 1);
    for (int64_t r0 = 0; r0 < w.rows; r0 += static_cast<int64_t>(max_rows_bound)) {
        const Tensor slice = w.row_range(r0, std::min<int64_t>(w.rows - r0, static_cast<int64_t>(max_rows_bound)));
        const View wv = stream_->view(slice);
        for (int64_t t0 = 0; t0 < x.rows;) {
            const bool matvec = x.rows <= kChunkedMatvecMaxTokens;
            const int64_t n = matvec ? std::min(kMatvecMaxTokens, x.rows - t0) : x.rows - t0;
            MatvecPush p{};
            address_product(p, wv, slice, xv, x, ov, out);
            p.x_off += words(x.row_stride) * u32(t0);
            p.out_off += words(out.row_stride) * u32(t0) + u32(r0);
            p.tokens = u32(n);
            p.bias_off = bv.words() + u32(bias ? r0 : 0);
            p.has_bias = bias ? 1 : 0;
            const std::initializer_list<Arg> args = {ro(wv), ro(xv), rw(ov), ro(bv)};
            if (matvec) {
                if (xq) {
                    const uint64_t groups = block_matvec_groups(p, w.cols, slice.rows, &*xq);
                    p.x_off += u32(t0) * p.x_stride * 8u;  // the chunk's first row: 8 code words a block
                    p.x_scales += u32(t0) * p.x_stride;
                    stream_->dispatch("matvec_dot_" + type, {ro(wv), ro(xq->view), rw(ov), ro(bv)}, p,
                                      linear_grid(groups));
                } else if (pipelines_->has("matvec_blocks_" + type)) {
                    const uint64_t groups = block_matvec_groups(p, w.cols, slice.rows, nullptr);
                    stream_->dispatch("matvec_blocks_" + type, args, p, linear_grid(groups));
                } else
                    stream_->dispatch("matvec_" + type, args, p, linear_grid(static_cast<uint64_t>(slice.rows)));
            } else {
                // 64-row tiles of 64 tokens on cooperative matrices, else of 32 (matmul_tiled.comp).
                const bool coop = cooperative_matrix_ && pipelines_->has("matmul_coop_" + type);
                const int64_t tile_tokens = coop ? 64 : 32;
                const Grid g{u32((slice.rows + 63) / 64), u32((n + tile_tokens - 1) / tile_tokens), 1};
                require(g.y <= 65535, "matmul: too many activation rows");
                stream_->dispatch((coop ? "matmul_coop_" : "matmul_") + type, args, p, g);
            }
            t0 += n;
        }
    }
}

void VulkanBackend::do_get_rows(const Tensor& table, std::span<const int32_t> ids, const Tensor& out) {
    if (ids.empty()) return;
    const std::string pipeline = std::string("get_rows_") + type_name(table.type);
    const View ov = stream_->view(out);
    const auto run = [&](const View& tv, const View& iv, uint32_t first_out, uint32_t n) {
        GetRowsPush p{tv.inner, u32(static_cast<int64_t>(table.row_stride)), iv.words(),
                      ov.words() + first_out * words(out.row_stride), words(out.row_stride), u32(table.cols), n};
        stream_->dispatch(pipeline, {ro(tv), ro(iv), rw(ov)}, p, Grid{u32((table.cols + 63) / 64), n, 1});
    };
    const bool fits = table.bytes() + 64 <= ctx_->limits().maxStorageBufferRange;
    if (fits) {
        const View tv = stream_->view(table);
        for (size_t i0 = 0; i0 < ids.size(); i0 += 65535) {
            const size_t n = std::min<size_t>(65535, ids.size() - i0);
            const View iv = stream_->upload(ids.subspan(i0, n));
            run(tv, iv, u32(static_cast<int64_t>(i0)), u32(static_cast<int64_t>(n)));
        }
    } else {
        const int32_t zero = 0;
        const View iv = stream_->upload(std::span<const int32_t>(&zero, 1));
        for (size_t i = 0; i < ids.size(); ++i) run(stream_->view(table.row_range(ids[i], 1)), iv, u32(static_cast<int64_t>(i)), 1);
    }
}

}  // namespace ember::vulkan
