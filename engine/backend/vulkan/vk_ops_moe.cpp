// SPDX-License-Identifier: MIT
// Mixture-of-experts on the Vulkan backend: routing on the GPU (the chosen ids never come back to the host), expert
// products and the combination. Decode takes one matrix x vector per slot, reading the slot's expert matrix by its
// id; the verification of a few tokens groups the slots by expert on the GPU (experts_group.comp) and takes one
// matrix x vector per tile of 8 slots of an expert (matvec_dot.comp), and prefill groups them too and multiplies
// tile by tile (experts_tiled.comp), so that each expert matrix is read once per 32 of its slots.
// Per-expert biases read the slots' ids on the GPU too (expert_bias.comp).
#include <algorithm>

#include "backend/vulkan/vulkan_backend.h"

namespace ember::vulkan {

namespace {

struct MoePush {
    uint32_t mode, src_off, src_stride, ids_off, ids_stride, w_off, w_stride, out_off, out_stride, rows, cols, k;
    uint32_t shared_off = 0, shared_stride = 0, gate_off = 0, gate_stride = 0;  // mode 2: the shared expert
};

struct GroupPush {
    uint32_t ids_off, ids_stride, k, slots, n_experts, phase, offsets_off, tiles_off, list_off, tile_slots;
};

// rows: the rows of one expert.
struct ExpertsTiledPush : ProductAddress {
    uint32_t k, per_slot, offsets_off, tiles_off, list_off;
};
static_assert(sizeof(ExpertsTiledPush) == 13 * sizeof(uint32_t), "push constants are copied as they lie");

struct ExpertBiasPush {
    uint32_t bias_off, bias_stride, ids_off, ids_stride, out_off, out_stride, cols, k, slots, n_experts;
};

constexpr uint32_t kTileSlots = 32;  // BN of experts_tiled.comp
constexpr uint32_t kTileRows = 128;  // BM
constexpr uint32_t kMatvecTileSlots = 8;  // the slots of one work group of matvec_dot.comp's EXPERTS variants

}  // namespace

void VulkanBackend::do_moe_route(const Tensor& logits, int k, const Tensor& ids, const Tensor& weights) {
    require(k <= 64, "moe_route: at most 64 experts per token on the Vulkan backend");
    require(logits.cols <= 1024, "moe_route: at most 1024 experts on the Vulkan backend");
    const View lv = stream_->view(logits), iv = stream_->view(ids), wv = stream_->view(weights);
    const MoePush p{0,          lv.words(), words(logits.row_stride), iv.words(), words(ids.row_stride),
                    wv.words(), words(weights.row_stride), 0, 0, u32(logits.rows), u32(logits.cols), u32(k)};
    const View none = stream_->unused();  // combine's output and the shared expert's bindings
    stream_->dispatch("moe", {ro(lv), rw(iv), rw(wv), rw(none), ro(none), ro(none)}, p,
                      linear_grid(static_cast<uint64_t>(logits.rows)));
}

void VulkanBackend::do_matmul_experts(const Tensor& w, int64_t n_experts, const Tensor& x, const Tensor& ids,
                                      const Tensor& out) {
    const int64_t rows = w.rows / n_experts;
    const int64_t n_tokens = ids.rows, k = ids.cols;
    if (n_tokens * k == 0) return;
    require(n_tokens * k <= 65535, "matmul_experts: too many slots in one batch");
    const std::string type = type_name(w.type);
    const View wv = stream_->view(w), xv = stream_->view(x), ov = stream_->view(out), iv = stream_->view(ids);
    const int64_t slots = n_tokens * k;
    if (slots >= kGroupedMinSlots && n_experts <= 1024 && pipelines_->has("experts_tiled_" + type)) {
        // Slots grouped by expert on the GPU, then one tiled product per (expert, 32 of its slots, 128 rows).
        const ExpertGroups g = group_slots_by_expert(iv, ids, n_experts, kTileSlots);
        ExpertsTiledPush t{};
        address_product(t, wv, w, xv, x, ov, out);
        t.rows = u32(rows);
        t.k = u32(k);
        t.per_slot = x.rows == slots && k > 1 ? 1 : 0;
        t.offsets_off = g.offsets_off;
        t.tiles_off = g.tiles_off;
        t.list_off = g.list_off;
        // experts_coop.comp has the same 128 x 32 tiles on cooperative matrices.
        const bool coop = cooperative_matrix_ && pipelines_->has("experts_coop_" + type);
        stream_->dispatch((coop ? "experts_coop_" : "experts_tiled_") + type, {ro(wv), ro(xv), rw(ov), ro(g.scratch)},
                          t, Grid{u32((rows + kTileRows - 1) / kTileRows), u32(static_cast<int64_t>(g.max_tiles)), 1});
        count_expert_reads(std::min(slots, n_experts), rows, w.row_stride);
        return;
    }
    MatvecPush p{};
    address_product(p, wv, w, xv, x, ov, out);
    address_expert_slots(p, iv, ids, rows, x);
    const std::initializer_list<Arg> args = {ro(wv), ro(xv), rw(ov), ro(stream_->unused()), ro(iv)};
    std::optional<Q8Activations> xq;
    if (integer_dot_ && pipelines_->has("experts_dot_" + type)) xq = quantize_q8_1(x);
    if (xq) {
        ExpertsDotPush d{};
        d.m = p;
        const uint64_t groups = block_matvec_groups(d.m, w.cols, rows, &*xq);
        const auto [grid, slots_view] = experts_dot_slots(d, iv, ids, n_experts, groups);
        stream_->dispatch((d.grouped ? "experts_grouped_dot_" : "experts_dot_") + type,
                          {ro(wv), ro(xq->view), rw(ov), ro(stream_->unused()), ro(slots_view)}, d, grid);
        if (d.grouped) {
            count_expert_reads(std::min(slots, n_experts), rows, w.row_stride);
            return;
        }
    } else if (pipelines_->has("experts_blocks_" + type)) {
        const uint64_t groups = block_matvec_groups(p, w.cols, rows, nullptr);
        stream_->dispatch("experts_blocks_" + type, args, p, Grid{u32(static_cast<int64_t>(groups)), u32(slots), 1});
    } else
        stream_->dispatch("experts_" + type, args, p, Grid{u32(rows), u32(slots), 1});
    count_expert_reads(slots, rows, w.row_stride);
}

void VulkanBackend::count_expert_reads(int64_t matrices, int64_t rows, size_t row_stride) {
    const uint64_t read = static_cast<uint64_t>(matrices * rows) * row_stride;
    counters_.expert_weight_bytes += read;
    counters_.weight_bytes += read;
}

View VulkanBackend::experts_scratch(size_t bytes) {
    bytes = (std::max<size_t>(bytes, 4) + 3) / 4 * 4;
    require(bytes <= ctx_->limits().maxStorageBufferRange, "matmul_experts: too many slots for one binding");
    if (!experts_scratch_ || experts_scratch_->size() < bytes) {
        if (stream_->pending()) stream_->finish();  // recorded work may still use the old buffer
        experts_scratch_ = std::make_unique<DeviceBuffer>(*ctx_, std::max<size_t>(bytes, size_t{1} << 16),
                                                          ctx_->memory().device_local);
    }
    return View{experts_scratch_->handle(), 0, bytes, 0};
}

VulkanBackend::ExpertGroups VulkanBackend::group_slots_by_expert(const View& iv, const Tensor& ids, int64_t n_experts,
                                                                 uint32_t tile_slots) {
    const int64_t slots = ids.rows * ids.cols;
    ExpertGroups groups;
    groups.max_tiles = static_cast<uint64_t>((slots + tile_slots - 1) / tile_slots) +
                       static_cast<uint64_t>(std::min(slots, n_experts));
    // Scratch words: the tile count, the experts' starts (n_experts + 1), the tile table, the grouped slots.
    GroupPush g{iv.words(), words(ids.row_stride), u32(ids.cols), u32(slots), u32(n_experts), 0, 1, 0, 0, tile_slots};
    g.tiles_off = g.offsets_off + u32(n_experts) + 1;
    g.list_off = g.tiles_off + u32(static_cast<int64_t>(groups.max_tiles));
    groups.scratch = experts_scratch((static_cast<size_t>(g.list_off) + static_cast<size_t>(slots)) * 4);
    stream_->dispatch("experts_group", {ro(iv), rw(groups.scratch)}, g, Grid{1, 1, 1});
    g.phase = 1;
    stream_->dispatch("experts_group", {ro(iv), rw(groups.scratch)}, g, Grid{u32((slots + 255) / 256), 1, 1});
    groups.offsets_off = g.offsets_off;
    groups.tiles_off = g.tiles_off;
    groups.list_off = g.list_off;
    return groups;
}

std::pair<Grid, View> VulkanBackend::experts_dot_slots(ExpertsDotPush& p, const View& iv, const Tensor& ids,
                                                       int64_t n_experts, uint64_t groups) {
    const int64_t slots = ids.rows * ids.cols;
    if (ids.rows < kGroupedMatvecMinTokens || n_experts > 1024) {  // experts_group.comp counts in 1024 words
        p.grouped = 0;
        return {Grid{u32(static_cast<int64_t>(groups)), u32(slots), 1}, iv};
    }
    const ExpertGroups g = group_slots_by_expert(iv, ids, n_experts, kMatvecTileSlots);
    p.grouped = 1;
    p.offsets_off = g.offsets_off;
    p.tiles_off = g.tiles_off;
    p.list_off = g.list_off;
    return {Grid{u32(static_cast<int64_t>(groups)), u32(static_cast<int64_t>(g.max_tiles)), 1}, g.scratch};
}

void VulkanBackend::do_add_expert_bias(const Tensor& bias, const Tensor& ids, const Tensor& out) {
    const int64_t slots = ids.rows * ids.cols;
    if (slots == 0) return;
    const View bv = stream_->view(bias), iv = stream_->view(ids), ov = stream_->view(out);
    const ExpertBiasPush p{bv.words(), words(bias.row_stride), iv.words(), words(ids.row_stride), ov.words(),
                           words(out.row_stride), u32(out.cols), u32(ids.cols), u32(slots), u32(bias.rows)};
    const uint64_t n = static_cast<uint64_t>(slots) * static_cast<uint64_t>(out.cols);
    require(n <= UINT32_MAX, "add_expert_bias: tensor too large");
    stream_->dispatch("expert_bias", {ro(bv), ro(iv), rw(ov)}, p, linear_grid((n + 255) / 256));
}

void VulkanBackend::do_moe_combine(const Tensor& y, const Tensor& weights, const Tensor& out) {
    combine_experts(y, weights, nullptr, nullptr, out);
}

void VulkanBackend::do_moe_combine_shared(const Tensor& y, const Tensor& weights, const Tensor& shared,
                                          const Tensor& gate, const Tensor& out) {
    combine_experts(y, weights, &shared, &gate, out);
}

void VulkanBackend::combine_experts(const Tensor& y, const Tensor& weights, const Tensor* shared, const Tensor* gate,
                                    const Tensor& out) {
    const int64_t k = weights.cols;
    const View yv = stream_->view(y), wv = stream_->view(weights), ov = stream_->view(out);
    const View sv = shared ? stream_->view(*shared) : stream_->unused();
    const View gv = gate ? stream_->view(*gate) : stream_->unused();
    MoePush p{shared ? 2u : 1u, yv.words(), words(y.row_stride), 0, 0, wv.words(), words(weights.row_stride),
              ov.words(), words(out.row_stride), u32(out.rows), u32(out.cols), u32(k)};
    if (shared) {
        p.shared_off = sv.words();
        p.shared_stride = words(shared->row_stride);
        p.gate_off = gv.words();
        p.gate_stride = words(gate->row_stride);
    }
    const uint64_t n = static_cast<uint64_t>(out.rows) * static_cast<uint64_t>(out.cols);
    stream_->dispatch("moe", {ro(yv), ro(stream_->unused()), ro(wv), rw(ov), ro(sv), ro(gv)}, p,
                      linear_grid((n + 63) / 64));
}

}  // namespace ember::vulkan
