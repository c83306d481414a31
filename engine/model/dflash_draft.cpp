// SPDX-License-Identifier: MIT
// The DFlash draft model: loading against its target, and its forward pass.
#include "model/dflash_draft.h"

#include <algorithm>
#include <cmath>

#include "model/kv_cache.h"
#include "model/weight_binder.h"

namespace ember::model {

namespace {

using gguf::TensorType;

// The draft's KV cache (context features and the block) and the activations of a block or an injected batch.
class DFlashState final : public SequenceState {
public:
    DFlashState(Backend& backend, const DFlashInfo& info, int64_t n_taps, int64_t n_vocab, const StateOptions& o,
                int64_t batch)
        : batch_(batch), n_ctx_(o.n_ctx),
          cache_(backend, info.n_layer, o.n_ctx + info.block_size, info.n_head_kv * info.head_dim,
                 info.n_head_kv * info.head_dim, o.kv_type) {
        const int64_t e = info.n_embd, q = info.n_head * info.head_dim, kv = info.n_head_kv * info.head_dim;
        auto f32 = [&](int64_t rows, int64_t cols) { return arena_.plan(TensorType::F32, rows, cols); };
        const size_t ifeat = f32(batch, n_taps * e), ig = f32(batch, e), ix = f32(batch, e), ih = f32(batch, e),
                     iq = f32(batch, q), ik = f32(batch, kv), iv = f32(batch, kv), ia = f32(batch, q),
                     igate = f32(batch, info.n_ff), iup = f32(batch, info.n_ff), il = f32(info.block_size, n_vocab);
        arena_.allocate(backend);
        features = arena_.get(ifeat), g = arena_.get(ig), x = arena_.get(ix), h = arena_.get(ih);
        q_ = arena_.get(iq), k = arena_.get(ik), v = arena_.get(iv), attn = arena_.get(ia);
        gate = arena_.get(igate), up = arena_.get(iup), logits = arena_.get(il);
    }

    int64_t capacity() const override { return n_ctx_; }
    int64_t position() const override { return context_; }
    size_t memory_bytes() const override { return cache_.bytes() + arena_.bytes(); }
    int64_t truncate(int64_t n) override {
        context_ = std::clamp<int64_t>(n, 0, context_);
        while (!cell_position.empty() && cell_position.back() >= context_) cell_position.pop_back();
        return context_;
    }
    int64_t cells() const { return static_cast<int64_t>(cell_position.size()); }

    const KvCache& cache() const { return cache_; }
    int64_t batch() const { return batch_; }
    // The context may have gaps (rows the session chose not to hand over): cache cell i holds the injected row
    // at position cell_position[i] (increasing), RoPE'd at that position; context_ is one past the last of them.
    int64_t context_ = 0;
    std::vector<int32_t> cell_position;
    std::vector<int32_t> positions, cells_of_batch, visible;
    Tensor features, g, x, h, q_, k, v, attn, gate, up, logits;

private:
    int64_t batch_;
    int64_t n_ctx_;
    KvCache cache_;
    TensorArena arena_;
};

}  // namespace

DFlashDraft::DFlashDraft(const gguf::File& file, const DFlashInfo& info, const Model& target, Backend& backend,
                         const LoadProgress& progress)
    : target_(target), backend_(backend), info_(info) {
    rope_.mode = RopeMode::neox;
    rope_.n_rot = static_cast<int>(info.head_dim);
    rope_.freq_base = info.rope_base;
    WeightBinder w(file, backend, progress);
    const std::string& p = info.prefix;
    const int64_t e = info.n_embd;
    const AttentionShape shape{e, info.n_head, info.n_head_kv, info.head_dim, info.head_dim};
    const int64_t taps = static_cast<int64_t>(info.target_layers.size());
    w_.fc = w.require(p + "fc.weight", {taps * e, e});
    w_.enc_norm = w.require_f32(p + "enc.output_norm.weight", {e});
    w_.out_norm = w.require_f32(p + "output_norm.weight", {e});
    for (int64_t i = 0; i < info.n_layer; ++i) {
        const std::string b = p + "blk." + std::to_string(i) + ".";
        LlamaLayer l;
        l.attn_norm = w.require_f32(b + "attn_norm.weight", {e});
        bind_attention(w, b, shape, true, false, l.attn);
        l.ffn_norm = w.require_f32(b + "ffn_norm.weight", {e});
        l.ffn = bind_gated_ffn(w, b, "", e, info.n_ff);
        w_.layers.push_back(std::move(l));
    }
    buffers_ = w.take_buffers();
}

AttentionPlacement DFlashDraft::placement(const SequenceState& base, size_t layer, std::span<const int32_t> query_rows,
                                          int64_t n_kv) const {
    const auto& st = static_cast<const DFlashState&>(base);
    AttentionPlacement at;
    at.positions = st.positions;
    at.rope = rope_;
    at.k_cache = &st.cache().k(layer);
    at.v_cache = &st.cache().v(layer);
    at.cache_rows = st.cells_of_batch;
    at.query_rows = query_rows;
    at.n_kv = n_kv;
    const int hd = static_cast<int>(info_.head_dim);
    at.params = {static_cast<int>(info_.n_head), static_cast<int>(info_.n_head_kv), hd,
                 1.0f / std::sqrt(static_cast<float>(hd))};
    return at;
}

std::unique_ptr<SequenceState> DFlashDraft::create_state(const StateOptions& options) const {
    return std::make_unique<DFlashState>(backend_, info_, static_cast<int64_t>(info_.target_layers.size()),
                                         target_.info().n_vocab, options, 256);
}

void DFlashDraft::inject(SequenceState& base, std::span<const float> features, int64_t first) const {
    auto& st = static_cast<DFlashState&>(base);
    const int64_t e = info_.n_embd;
    const int64_t width = static_cast<int64_t>(info_.target_layers.size()) * e;
    const int64_t total = static_cast<int64_t>(features.size()) / width;
    if (static_cast<int64_t>(features.size()) != total * width) throw Error("dflash: feature rows of the wrong width");
    st.truncate(first);  // rows at and after `first` are replaced; rows before it may be missing (a gap)
    if (st.cells() + total > st.capacity()) throw Error("dflash: context full");
    Backend& be = backend_;
    for (int64_t done = 0; done < total; done += st.batch()) {
        const int64_t n = std::min(st.batch(), total - done);
        const Tensor f = st.features.row_range(0, n), g = st.g.row_range(0, n), k = st.k.row_range(0, n),
                     v = st.v.row_range(0, n);
        be.write(f, std::as_bytes(features.subspan(static_cast<size_t>(done * width), static_cast<size_t>(n * width))));
        // g = rms_norm(fc . features; hidden_norm)
        be.matmul(w_.fc, f, g);
        be.rms_norm(g, w_.enc_norm, info_.eps, g);
        st.positions.resize(static_cast<size_t>(n));
        st.cells_of_batch.resize(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) {
            st.positions[static_cast<size_t>(i)] = static_cast<int32_t>(first + done + i);
            st.cells_of_batch[static_cast<size_t>(i)] = static_cast<int32_t>(st.cells() + i);
        }
        for (size_t il = 0; il < w_.layers.size(); ++il) {
            // No attn_norm for injected rows (§3.3 step 3): K = RoPE(k_norm(W_k g)), V = W_v g.
            const AttentionPlacement at = placement(st, il, st.cells_of_batch, 0);
            store_attention_kv(be, w_.layers[il].attn, at, info_.eps, g, k, v);
        }
        st.cell_position.insert(st.cell_position.end(), st.positions.begin(), st.positions.end());
    }
    st.context_ = first + total;
}

std::vector<int32_t> DFlashDraft::draft(SequenceState& base, int32_t last, int64_t position, int n,
                                        std::vector<float>* logits) const {
    auto& st = static_cast<DFlashState&>(base);
    const int64_t block = info_.block_size;
    n = static_cast<int>(std::clamp<int64_t>(n, 0, block - 1));
    if (n == 0 || st.context_ != position || st.cells() + block > st.capacity() + block) return {};
    Backend& be = backend_;
    std::vector<int32_t> tokens(static_cast<size_t>(block), info_.mask_token);
    tokens[0] = last;
    const int64_t first_cell = st.cells();
    st.positions.resize(static_cast<size_t>(block));
    st.cells_of_batch.resize(static_cast<size_t>(block));
    st.visible.assign(static_cast<size_t>(block), static_cast<int32_t>(first_cell + block - 1));  // bidirectional
    for (int64_t i = 0; i < block; ++i) {
        st.positions[static_cast<size_t>(i)] = static_cast<int32_t>(position + i);
        st.cells_of_batch[static_cast<size_t>(i)] = static_cast<int32_t>(first_cell + i);
    }
    const Tensor x = st.x.row_range(0, block), h = st.h.row_range(0, block), q = st.q_.row_range(0, block),
                 k = st.k.row_range(0, block), v = st.v.row_range(0, block), a = st.attn.row_range(0, block),
                 gate = st.gate.row_range(0, block), up = st.up.row_range(0, block);
    const AttentionScratch scratch{q, k, v, a, {}, {}};
    be.get_rows(target_.token_embedding(), tokens, x);
    for (size_t il = 0; il < w_.layers.size(); ++il) {
        const LlamaLayer& l = w_.layers[il];
        be.rms_norm(x, l.attn_norm, info_.eps, h);
        // The block's cells sit after the context; the next injection overwrites them.
        const AttentionPlacement at = placement(st, il, st.visible, first_cell + block);
        attention_block(be, l.attn, at, info_.eps, h, scratch, h);
        be.add(x, h, x);
        be.rms_norm(x, l.ffn_norm, info_.eps, h);
        gated_ffn(be, l.ffn, Activation::silu, h, up, gate, h);
        be.add(x, h, x);
    }
    const Tensor rows = h.row_range(0, n + 1);
    be.rms_norm(x.row_range(0, n + 1), w_.out_norm, info_.eps, rows);
    const Tensor out = st.logits.row_range(0, n + 1);
    be.matmul(target_.output_head(), rows, out);
    std::vector<float> host(static_cast<size_t>((n + 1) * out.cols));
    be.read(out, std::as_writable_bytes(std::span(host)));
    std::vector<int32_t> drafted;
    for (int i = 1; i <= n; ++i) {
        const auto row = std::span(host).subspan(static_cast<size_t>(i * out.cols), static_cast<size_t>(out.cols));
        drafted.push_back(static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin()));
    }
    if (logits) *logits = std::move(host);
    return drafted;
}

}  // namespace ember::model

namespace ember {

std::unique_ptr<DraftModel> load_dflash_draft(const gguf::File& draft_file, const Model& target, Backend& backend,
                                              const LoadProgress& progress) {
    const std::string prefix = model::is_drafted(draft_file) ? std::string(model::kDraftPrefix) : "";
    const ModelInfo& t = target.info();
    const model::DFlashInfo info = model::read_dflash(draft_file, prefix, t.n_embd, t.n_layer, t.n_vocab);
    return std::make_unique<model::DFlashDraft>(draft_file, info, target, backend, progress);
}

}  // namespace ember
