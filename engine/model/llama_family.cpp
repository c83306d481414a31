// SPDX-License-Identifier: MIT
// The Llama-family models: binding their weights and the forward pass.
#include "model/llama_family.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/kv_cache.h"
#include "model/model_output.h"
#include "model/weight_binder.h"

namespace ember::model {

namespace {

RopeMode rope_mode_of(const std::string& arch) { return arch == "llama" ? RopeMode::normal : RopeMode::neox; }

bool has_qk_norm(const std::string& arch) { return arch == "qwen3" || arch == "qwen3moe" || arch == "gemma3"; }

std::vector<int64_t> cache_rows(const TransformerHParams& hp, int64_t n_ctx, int64_t batch) {
    std::vector<int64_t> rows;
    for (int64_t il = 0; il < hp.n_layer; ++il)
        rows.push_back(hp.kv_cache_rows(il, n_ctx, batch));
    return rows;
}

// KV caches plus the activations of one batch. Local (sliding-window) layers keep only local_cache_rows rows:
// row r holds position local_base + r, and the window's rows move to the front when a batch would run past the end.
class LlamaState final : public SequenceState {
public:
    LlamaState(Backend& backend, const TransformerHParams& hp, int64_t n_ctx, KvCacheType kv_type, int64_t batch)
        : backend_(backend), hp_(hp), batch_(batch), n_ctx_(n_ctx),
          cache_(backend, cache_rows(hp, n_ctx, batch), hp.n_head_kv * hp.head_dim, hp.n_head_kv * hp.head_dim_v,
                 kv_type) {
        using gguf::TensorType;
        const size_t ix = arena_.plan(TensorType::F32, batch, hp.n_embd);
        const size_t ih = arena_.plan(TensorType::F32, batch, hp.n_embd);
        const size_t iq = arena_.plan(TensorType::F32, batch, hp.n_head * hp.head_dim);
        const size_t ik = arena_.plan(TensorType::F32, batch, hp.n_head_kv * hp.head_dim);
        const size_t iv = arena_.plan(TensorType::F32, batch, hp.n_head_kv * hp.head_dim_v);
        const size_t ia = arena_.plan(TensorType::F32, batch, hp.n_head * hp.head_dim_v);
        const bool moe = hp.n_expert > 0;
        const size_t ig = arena_.plan(TensorType::F32, batch, moe ? 1 : hp.n_ff);
        const size_t iu = arena_.plan(TensorType::F32, batch, moe ? 1 : hp.n_ff);
        const int64_t slots = moe ? batch * hp.n_expert_used : 1, used = moe ? hp.n_expert_used : 1;
        const size_t irouter = arena_.plan(TensorType::F32, batch, moe ? hp.n_expert : 1);
        const size_t iids = arena_.plan(TensorType::I32, batch, used);
        const size_t iew = arena_.plan(TensorType::F32, batch, used);
        const size_t ieg = arena_.plan(TensorType::F32, slots, moe ? hp.n_ff_exp : 1);
        const size_t ieu = arena_.plan(TensorType::F32, slots, moe ? hp.n_ff_exp : 1);
        const size_t ied = arena_.plan(TensorType::F32, slots, moe ? hp.n_embd : 1);
        arena_.allocate(backend);
        x = arena_.get(ix);
        h = arena_.get(ih);
        q = arena_.get(iq);
        k = arena_.get(ik);
        v = arena_.get(iv);
        attn = arena_.get(ia);
        gate = arena_.get(ig);
        up = arena_.get(iu);
        router = arena_.get(irouter);
        expert_ids = arena_.get(iids);
        expert_weights = arena_.get(iew);
        exp_gate = arena_.get(ieg);
        exp_up = arena_.get(ieu);
        exp_down = arena_.get(ied);
    }

    int64_t capacity() const override { return n_ctx_; }
    size_t memory_bytes() const override {
        return cache_.bytes() + arena_.bytes() + (logits_buffer_ ? logits_buffer_->size() : 0);
    }
    int64_t position() const override { return n_past; }
    int64_t truncate(int64_t n) override {
        n_past = std::min(n_past, std::max<int64_t>(n, 0));
        // A local layer's rows before local_base are gone: a position whose window reaches back past them is
        // recomputed from 0.
        if (local_base > 0 && n_past - hp_.sliding_window + 1 < local_base) n_past = local_base = 0;
        return n_past;
    }

    // Before a batch of n tokens: if it would run past the local layers' rows, the last window - 1 rows (all that
    // the batch's first query sees besides itself) move to the front. They never overlap their new place: the
    // rows hold 2 * window + batch, and this happens only once more than 2 * window rows are in use.
    void slide_local_window(Backend& be, int64_t n) {
        if (hp_.sliding_window <= 0) return;
        const int64_t rows = hp_.local_cache_rows(n_ctx_, batch_);
        if (n_past + n - local_base <= rows) return;
        const int64_t keep_from = std::max(local_base, n_past - hp_.sliding_window + 1);
        const int64_t count = n_past - keep_from, from = keep_from - local_base;
        for (int64_t il = 0; il < hp_.n_layer && count > 0; ++il) {
            if (!hp_.is_local_layer(il)) continue;
            for (const Tensor* cache : {&cache_.k(static_cast<size_t>(il)), &cache_.v(static_cast<size_t>(il))})
                be.convert(cache->row_range(from, count), cache->row_range(0, count));
        }
        local_base = keep_from;
    }

    // Room for `rows` rows of logits (grown on demand: all-position logits are rare).
    Tensor logits(int64_t rows) {
        if (!logits_buffer_ || logits_rows_ < rows) {
            logits_buffer_ = backend_.allocate(static_cast<size_t>(rows * hp_.n_vocab) * sizeof(float));
            logits_rows_ = rows;
        }
        return make_tensor(*logits_buffer_, gguf::TensorType::F32, rows, hp_.n_vocab);
    }

    const KvCache& cache() const { return cache_; }
    int64_t batch() const { return batch_; }

    int64_t n_past = 0;
    int64_t local_base = 0;  // the position of local layers' cache row 0
    std::vector<int32_t> positions;
    std::vector<int32_t> local_rows;  // positions - local_base: where the batch's rows go in local caches
    Tensor x, h, q, k, v, attn, gate, up;  // [batch, width] activations
    // Mixture of experts: router logits [batch, n_expert], the chosen experts and their weights [batch, used], and
    // the experts' rows [batch * used, width] (one-element placeholders in dense models).
    Tensor router, expert_ids, expert_weights, exp_gate, exp_up, exp_down;

private:
    Backend& backend_;
    TransformerHParams hp_;
    int64_t batch_;
    int64_t n_ctx_;
    KvCache cache_;
    TensorArena arena_;
    std::unique_ptr<Buffer> logits_buffer_;
    int64_t logits_rows_ = 0;
};

}  // namespace

LlamaFamilyModel::LlamaFamilyModel(const gguf::File& file, Backend& backend, const LoadProgress& progress)
    : backend_(backend) {
    const std::string arch(file.get_string("general.architecture"));
    hp_ = read_transformer_hparams(file, arch, rope_mode_of(arch));
    const gguf::TensorInfo* embd = file.find_tensor("token_embd.weight");
    if (!embd) throw Error(file.name() + ": missing tensor 'token_embd.weight'");
    hp_.n_vocab = embd->shape[1];

    WeightBinder w(file, backend, progress);
    const int64_t e = hp_.n_embd;
    const AttentionShape shape{e, hp_.n_head, hp_.n_head_kv, hp_.head_dim, hp_.head_dim_v};
    token_embd_ = w.require("token_embd.weight", {e, hp_.n_vocab});
    output_norm_ = w.require_f32("output_norm.weight", {e});
    output_ = w.optional("output.weight", {e, hp_.n_vocab}).value_or(token_embd_);
    rope_factors_ = w.optional_f32("rope_freqs.weight", {hp_.rope.n_rot / 2});
    if (hp_.yarn) bind_yarn(file);

    const bool qk_norm = has_qk_norm(arch);
    const bool gemma = arch == "gemma3";
    const bool gpt_oss = arch == "gpt-oss";
    if (gemma) ffn_activation_ = Activation::gelu;
    if (gpt_oss) ffn_activation_ = Activation::swiglu_clamped;
    for (int64_t i = 0; i < hp_.n_layer; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        LlamaLayer l;
        l.attn_norm = w.require_f32(b + "attn_norm.weight", {e});
        bind_attention(w, b, shape, qk_norm, false, l.attn);
        if (gpt_oss) l.attn.sinks = w.require_f32(b + "attn_sinks.weight", {hp_.n_head});
        if (gemma) {
            l.attn.out_norm = w.require_f32(b + "post_attention_norm.weight", {e});
            l.post_ffn_norm = w.require_f32(b + "post_ffw_norm.weight", {e});
        }
        // gpt-oss names its feed-forward norm after the attention it follows.
        l.ffn_norm = w.require_f32(b + (gpt_oss ? "post_attention_norm.weight" : "ffn_norm.weight"), {e});
        if (hp_.n_expert > 0) {
            RoutedExpertWeights& x = l.experts;
            x.router = w.require(b + "ffn_gate_inp.weight", {e, hp_.n_expert});
            x.gate_exps = w.require(b + "ffn_gate_exps.weight", {e, hp_.n_ff_exp, hp_.n_expert});
            x.up_exps = w.require(b + "ffn_up_exps.weight", {e, hp_.n_ff_exp, hp_.n_expert});
            x.down_exps = w.require(b + "ffn_down_exps.weight", {hp_.n_ff_exp, e, hp_.n_expert});
            if (gpt_oss) {
                x.router_bias = w.require_f32(b + "ffn_gate_inp.bias", {hp_.n_expert});
                x.gate_exps_bias = w.require_f32(b + "ffn_gate_exps.bias", {hp_.n_ff_exp, hp_.n_expert});
                x.up_exps_bias = w.require_f32(b + "ffn_up_exps.bias", {hp_.n_ff_exp, hp_.n_expert});
                x.down_exps_bias = w.require_f32(b + "ffn_down_exps.bias", {e, hp_.n_expert});
            }
        } else {
            l.ffn = bind_gated_ffn(w, b, "", e, hp_.n_ff);
        }
        layers_.push_back(l);
    }

    info_.architecture = arch;
    info_.name = std::string(file.get_string("general.name", ""));
    static_cast<ModelShape&>(info_) = hp_;
    info_.n_params = w.bound_elements();
    info_.weight_bytes = w.bound_bytes();
    weight_buffers_ = w.take_buffers();
}

// YaRN as the rope's per-pair divisors (uploaded once) and the square of its cos/sin factor on the scores.
void LlamaFamilyModel::bind_yarn(const gguf::File& file) {
    if (rope_factors_) throw Error(file.name() + ": rope_freqs.weight and YaRN scaling cannot both apply");
    const std::vector<float> divisors = yarn_frequency_divisors(*hp_.yarn, hp_.rope.n_rot, hp_.rope.freq_base);
    auto buffer = backend_.allocate(divisors.size() * sizeof(float));
    const Tensor t = make_tensor(*buffer, gguf::TensorType::F32, 1, static_cast<int64_t>(divisors.size()));
    backend_.write(t, std::as_bytes(std::span(divisors)));
    rope_factors_ = t;
    yarn_buffer_ = std::move(buffer);
    const double factor = yarn_attention_factor(*hp_.yarn);
    yarn_score_factor_ = static_cast<float>(factor * factor);
}

std::unique_ptr<SequenceState> LlamaFamilyModel::create_state(const StateOptions& options) const {
    if (options.n_ctx <= 0) throw Error("context size must be positive");
    return std::make_unique<LlamaState>(backend_, hp_, options.n_ctx, options.kv_type, max_batch());
}

void LlamaFamilyModel::forward(SequenceState& base, const ForwardRequest& request, std::vector<float>& logits) const {
    auto& st = static_cast<LlamaState&>(base);
    const int64_t n = static_cast<int64_t>(request.tokens.size());
    if (n == 0 || n > st.batch())
        throw Error("forward: batch of " + std::to_string(n) + " tokens (1 to " + std::to_string(st.batch()) + ")");
    if (request.first_position != st.n_past)
        throw Error("forward: tokens start at position " + std::to_string(request.first_position) +
                    " but the state holds " + std::to_string(st.n_past));
    if (st.n_past + n > st.capacity())
        throw Error("context full: " + std::to_string(st.n_past + n) + " positions needed, the context holds " +
                    std::to_string(st.capacity()));

    st.slide_local_window(backend_, n);
    st.positions.resize(static_cast<size_t>(n));
    st.local_rows.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
        st.positions[static_cast<size_t>(i)] = static_cast<int32_t>(st.n_past + i);
        st.local_rows[static_cast<size_t>(i)] = static_cast<int32_t>(st.n_past + i - st.local_base);
    }
    const std::span<const int32_t> pos = st.positions, local_rows = st.local_rows;
    const Tensor x = st.x.row_range(0, n), h = st.h.row_range(0, n), q = st.q.row_range(0, n),
                 k = st.k.row_range(0, n), v = st.v.row_range(0, n), attn = st.attn.row_range(0, n),
                 gate = st.gate.row_range(0, n), up = st.up.row_range(0, n);
    const AttentionScratch attention_scratch{q, k, v, attn, {}, {}};
    const float attention_scale =
        (hp_.attention_scale > 0.0f ? hp_.attention_scale : 1.0f / std::sqrt(static_cast<float>(hp_.head_dim))) *
        yarn_score_factor_;
    const AttentionParams global{static_cast<int>(hp_.n_head), static_cast<int>(hp_.n_head_kv),
                                 static_cast<int>(hp_.head_dim), attention_scale};
    AttentionParams local = global;
    local.window = static_cast<int>(hp_.sliding_window);
    const Tensor* factors = rope_factors_ ? &*rope_factors_ : nullptr;
    const float eps = hp_.rms_eps;
    Backend& be = backend_;

    LayerCapture capture(request, n, hp_.n_embd);
    be.get_rows(token_embd_, request.tokens, x);
    if (hp_.embedding_scale != 1.0f) be.scale(x, hp_.embedding_scale, x);
    for (size_t il = 0; il < layers_.size(); ++il) {
        const LlamaLayer& l = layers_[il];
        const bool is_local = hp_.is_local_layer(static_cast<int64_t>(il));
        const std::span<const int32_t> rows = is_local ? local_rows : pos;
        AttentionPlacement at;
        at.positions = pos;
        at.rope = is_local ? hp_.rope_local : hp_.rope;
        at.rope_factors = factors;
        at.k_cache = &st.cache().k(il);
        at.v_cache = &st.cache().v(il);
        at.cache_rows = at.query_rows = rows;
        at.n_kv = st.n_past + n - (is_local ? st.local_base : 0);
        at.params = is_local ? local : global;
        capture.at_layer(be, static_cast<int64_t>(il), x);
        be.rms_norm(x, l.attn_norm, eps, h);
        attention_block(be, l.attn, at, eps, h, attention_scratch, h);
        be.add(x, h, x);

        be.rms_norm(x, l.ffn_norm, eps, h);
        if (hp_.n_expert > 0) {
            const int64_t slots = n * hp_.n_expert_used;
            const RoutedExpertScratch scratch{st.router.row_range(0, n),        st.expert_ids.row_range(0, n),
                                              st.expert_weights.row_range(0, n), st.exp_gate.row_range(0, slots),
                                              st.exp_up.row_range(0, slots),     st.exp_down.row_range(0, slots)};
            routed_experts(be, l.experts, hp_.n_expert, static_cast<int>(hp_.n_expert_used), ffn_activation_, h,
                           scratch, h);
        } else {
            gated_ffn(be, l.ffn, ffn_activation_, h, up, gate, h);
        }
        if (l.post_ffn_norm) be.rms_norm(h, *l.post_ffn_norm, eps, h);
        be.add(x, h, x);
    }

    const int64_t n_out = request.all_logits ? n : 1;
    finish_forward(be, request, x, output_norm_, eps, h, output_, st.logits(n_out), logits, capture, hp_.n_layer);
    st.n_past += n;
}

}  // namespace ember::model
