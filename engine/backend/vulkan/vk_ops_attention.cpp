// SPDX-License-Identifier: MIT
// Conversions between row types, KV-cache writes (a conversion into the cache rows named by the positions) and
// causal attention over the cache (the sinks of AttentionParams go to the kernels as a binding and a flag in the
// push constants; the split path's combine step adds them when there are several chunks).
#include <algorithm>

#include "backend/vulkan/vulkan_backend.h"

namespace ember::vulkan {

namespace {

struct ConvertPush {
    uint32_t src_off, src_stride, dst_off, dst_stride, cols, rows, map_off, use_map;
};

struct CopyPush {
    uint32_t src_off, dst_off, count;
};

struct AttentionPush {
    uint32_t q_off, q_stride, k_off, k_stride, v_off, v_stride, out_off, out_stride, n_kv, n_head, group, head_dim;
    float scale;
    uint32_t pos_off, tokens, window;
    uint32_t sinks_off, has_sinks;  // AttentionParams::sinks: its offset in words, and whether there is one
};

// attention_split.comp's second half of the push constants.
struct SplitPush {
    AttentionPush base;
    uint32_t n_head_kv, batch_heads, n_batches, n_chunks, chunk_len;
};

struct CombinePush {
    uint32_t out_off, out_stride, n_head, head_dim, n_chunks, tokens, sinks_off, has_sinks;
};

constexpr int64_t kSplitTile = 32;             // rows per softmax step of attention_split.comp
constexpr int64_t kSplitMaxChunks = 128;       // attention_combine.comp merges up to one chunk per invocation
constexpr int64_t kSplitTargetGroups = 256;    // enough work groups to keep every core of a large GPU busy
constexpr int kSplitMaxHeads = 8;              // query heads per work group
constexpr int kSplitQueryFloats = 2048;        // its shared copy of their queries

constexpr int64_t kTiledMinQueries = 32;
constexpr int kTiledHeadSizes[] = {16, 32, 64, 72, 80, 128};  // attention_tiled.comp's modules
// Its queries per work group (Q and a K/V tile stay within 32 KiB of shared memory).
int64_t tiled_queries(int head_dim) {
    return head_dim > 80 ? 32 : 64;
}

enum class AttentionPath { tiled, split, plain };

// Many queries go tiled: a tile of cache rows is read once for a whole tile of queries, where the split kernel
// reads it once per query (a 4096-patch image: 4-5 ms instead of 113 ms on an H200). Below 32 queries, half a
// tile, the split kernel stays: it spreads a long cache over many work groups. Both read rows in whole words and
// shuffle in teams of 8 invocations.
AttentionPath attention_path(int64_t tokens, const AttentionParams& p, gguf::TensorType cache, bool word_rows,
                             bool tiled_ok, bool split_ok) {
    using gguf::TensorType;
    const bool tiled_size =
        std::find(std::begin(kTiledHeadSizes), std::end(kTiledHeadSizes), p.head_dim) != std::end(kTiledHeadSizes);
    if (tiled_ok && word_rows && tiled_size && tokens >= kTiledMinQueries &&
        (cache == TensorType::F32 || cache == TensorType::F16))
        return AttentionPath::tiled;
    if (split_ok && word_rows && p.head_dim % 4 == 0) return AttentionPath::split;
    return AttentionPath::plain;
}

struct SplitPlan {
    uint32_t batch_heads = 0, n_batches = 0, n_chunks = 0, chunk_len = 0;
};

// Heads per work group as many as fit (the kv rows are read once for all of them); then as many chunks as bring
// the work groups up to kSplitTargetGroups, each a whole number of tiles: a decode step of a few tokens spreads
// over the rows, a prefill gets one chunk per work group and no combine step.
SplitPlan plan_split(int64_t tokens, int64_t n_kv, const AttentionParams& p) {
    // Chunks count from each token's first visible row: a window bounds the rows any token sees.
    if (p.window > 0) n_kv = std::min<int64_t>(n_kv, p.window);
    const int group = p.n_head / p.n_head_kv;
    const int most = std::min({kSplitMaxHeads, group, kSplitQueryFloats / p.head_dim});
    SplitPlan plan;
    plan.n_batches = static_cast<uint32_t>((group + most - 1) / most);
    plan.batch_heads = static_cast<uint32_t>((group + plan.n_batches - 1) / plan.n_batches);
    const int64_t groups = tokens * p.n_head_kv * plan.n_batches;
    const int64_t rows = std::max<int64_t>(n_kv, 1);
    int64_t chunks = std::clamp<int64_t>((kSplitTargetGroups + groups - 1) / groups, 1, kSplitMaxChunks);
    chunks = std::min(chunks, (rows + kSplitTile - 1) / kSplitTile);
    const int64_t len = ((rows + chunks - 1) / chunks + kSplitTile - 1) / kSplitTile * kSplitTile;
    plan.chunk_len = u32(len);
    plan.n_chunks = u32((rows + len - 1) / len);
    return plan;
}

bool is_convert_target(gguf::TensorType t) {
    using gguf::TensorType;
    return t == TensorType::F32 || t == TensorType::F16 || t == TensorType::BF16 || t == TensorType::Q8_0;
}

}  // namespace

void VulkanBackend::convert_rows(const Tensor& x, const Tensor& out, const View* row_map) {
    require(is_convert_target(out.type), [&] { return "convert: cannot write " + type_name(out.type) + " rows"; });
    require(out.cols % gguf::traits(out.type).block_size == 0 && x.cols % gguf::traits(x.type).block_size == 0,
            "convert: row length is not a multiple of the block size");
    const View xv = stream_->view(x), ov = stream_->view(out);
    const size_t unit = out.type == gguf::TensorType::Q8_0 ? 32 : 1;
    const uint64_t n = static_cast<uint64_t>(x.rows) * static_cast<uint64_t>(x.cols) / unit;
    require(n <= UINT32_MAX, "convert: tensor too large");
    if (!row_map && x.type == gguf::TensorType::F32 && out.type == gguf::TensorType::F32 && x.contiguous() &&
        out.contiguous() && xv.inner % 16 == 0 && ov.inner % 16 == 0 && x.bytes() % 16 == 0) {
        const CopyPush p{xv.inner / 16, ov.inner / 16, u32(static_cast<int64_t>(x.bytes() / 16))};
        stream_->dispatch("copy", {ro(xv), rw(ov)}, p, linear_grid((p.count + 255) / 256));
        return;
    }
    const View mv = row_map ? *row_map : stream_->unused();
    const ConvertPush p{xv.inner, u32(static_cast<int64_t>(x.row_stride)), ov.inner,
                        u32(static_cast<int64_t>(out.row_stride)), u32(x.cols), u32(x.rows), mv.words(),
                        row_map ? 1u : 0u};
    const std::string pipeline =
        std::string("convert_") + type_name(x.type) + "_to_" + type_name(out.type);
    stream_->dispatch(pipeline, {ro(xv), rw(ov), ro(mv)}, p, linear_grid((n + 255) / 256));
}

void VulkanBackend::do_convert(const Tensor& x, const Tensor& out) {
    // Tensors larger than one binding go in row slices.
    const size_t stride = std::max(x.row_stride, out.row_stride);
    const int64_t slice = std::max<int64_t>(1, static_cast<int64_t>(ctx_->limits().maxStorageBufferRange / stride) - 1);
    for (int64_t r0 = 0; r0 < x.rows; r0 += slice) {
        const int64_t n = std::min(slice, x.rows - r0);
        convert_rows(x.row_range(r0, n), out.row_range(r0, n), nullptr);
    }
}

void VulkanBackend::do_store_kv(const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,
                                std::span<const int32_t> positions) {
    if (positions.empty()) return;
    const View map = stream_->upload(positions);
    convert_rows(k, k_cache, &map);
    convert_rows(v, v_cache, &map);
}

void VulkanBackend::do_attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache, int64_t n_kv,
                                 std::span<const int32_t> positions, const AttentionParams& p, const Tensor& out) {
    using gguf::TensorType;
    require(k_cache.type == TensorType::F32 || k_cache.type == TensorType::F16 || k_cache.type == TensorType::Q8_0,
            "attention: the cache must be f32, f16 or q8_0");
    if (q.rows == 0) return;
    const View qv = stream_->view(q), ov = stream_->view(out);
    const View kv = stream_->view(k_cache.row_range(0, std::max<int64_t>(n_kv, 1)));
    const View vv = stream_->view(v_cache.row_range(0, std::max<int64_t>(n_kv, 1)));
    const View pv = stream_->upload(positions);
    const View sv = p.sinks ? stream_->view(*p.sinks) : stream_->unused();
    AttentionPush push{};
    push.q_off = qv.words();
    push.q_stride = words(q.row_stride);
    push.k_off = kv.inner;
    push.k_stride = u32(static_cast<int64_t>(k_cache.row_stride));
    push.v_off = vv.inner;
    push.v_stride = u32(static_cast<int64_t>(v_cache.row_stride));
    push.out_off = ov.words();
    push.out_stride = words(out.row_stride);
    push.n_kv = u32(n_kv);
    push.n_head = u32(p.n_head);
    push.group = u32(p.n_head / p.n_head_kv);
    push.head_dim = u32(p.head_dim);
    push.scale = p.scale;
    push.pos_off = pv.words();
    push.tokens = u32(q.rows);
    push.window = u32(p.window);
    push.sinks_off = sv.words();
    push.has_sinks = p.sinks ? 1u : 0u;

    // K and V rows in whole words (q8_0 rows are read by bytes).
    const bool word_rows = k_cache.type == TensorType::Q8_0 || (push.k_off % 4 == 0 && push.k_stride % 4 == 0 &&
                                                                push.v_off % 4 == 0 && push.v_stride % 4 == 0);
    const AttentionPath path = attention_path(q.rows, p, k_cache.type, word_rows, attention_tiled_, attention_split_);
    if (path == AttentionPath::tiled) {
        const int64_t tiles = (q.rows + tiled_queries(p.head_dim) - 1) / tiled_queries(p.head_dim);
        stream_->dispatch(std::string("attention_tiled_") + type_name(k_cache.type) + "_" + std::to_string(p.head_dim),
                          {ro(qv), ro(kv), ro(vv), rw(ov), ro(pv), ro(sv)}, push,
                          linear_grid(static_cast<uint64_t>(tiles) * static_cast<uint64_t>(p.n_head)));
        return;
    }
    if (path == AttentionPath::split) {
        const SplitPlan plan = plan_split(q.rows, n_kv, p);
        const uint64_t partial_floats = static_cast<uint64_t>(q.rows) * static_cast<uint64_t>(p.n_head) *
                                        plan.n_chunks * static_cast<uint64_t>(p.head_dim + 2);
        const View part = plan.n_chunks > 1 ? attention_scratch(partial_floats * 4) : stream_->unused();
        const SplitPush split{push, u32(p.n_head_kv), plan.batch_heads, plan.n_batches, plan.n_chunks, plan.chunk_len};
        stream_->dispatch(std::string("attention_split_") + type_name(k_cache.type),
                          {ro(qv), ro(kv), ro(vv), rw(ov), ro(pv), plan.n_chunks > 1 ? rw(part) : ro(part), ro(sv)},
                          split,
                          linear_grid(static_cast<uint64_t>(q.rows) * static_cast<uint64_t>(p.n_head_kv) *
                                      plan.n_batches * plan.n_chunks));
        if (plan.n_chunks > 1) {
            const CombinePush combine{push.out_off, push.out_stride, push.n_head, push.head_dim, plan.n_chunks,
                                      push.tokens, push.sinks_off, push.has_sinks};
            stream_->dispatch("attention_combine", {ro(part), rw(ov), ro(sv)}, combine,
                              linear_grid(static_cast<uint64_t>(q.rows) * static_cast<uint64_t>(p.n_head)));
        }
        return;
    }
    const std::string pipeline = std::string("attention_") + type_name(k_cache.type);
    stream_->dispatch(pipeline, {ro(qv), ro(kv), ro(vv), rw(ov), ro(pv), ro(sv)}, push,
                      linear_grid(static_cast<uint64_t>(q.rows) * static_cast<uint64_t>(p.n_head)));
}

View VulkanBackend::attention_scratch(size_t bytes) {
    bytes = (std::max<size_t>(bytes, 4) + 3) / 4 * 4;
    if (!attention_scratch_ || attention_scratch_->size() < bytes) {
        if (stream_->pending()) stream_->finish();  // recorded work may still use the old buffer
        attention_scratch_ = std::make_unique<DeviceBuffer>(*ctx_, std::max<size_t>(bytes, size_t{1} << 20),
                                                            ctx_->memory().device_local);
    }
    require(bytes <= ctx_->limits().maxStorageBufferRange, "attention: too many partial results for one binding");
    return View{attention_scratch_->handle(), 0, bytes, 0};
}

}  // namespace ember::vulkan
