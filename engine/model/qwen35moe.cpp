// SPDX-License-Identifier: MIT
// The qwen35moe model: the trunk's forward pass, its MTP head, and its state.
#include "model/qwen35moe.h"

#include <algorithm>
#include <cmath>

#include "model/model_output.h"
#include "model/weight_binder.h"

namespace ember::model {

Qwen35MoeModel::Qwen35MoeModel(const gguf::File& file, Backend& backend, const LoadProgress& progress)
    : backend_(backend), hp_(read_qwen35_hparams(file)) {
    const gguf::TensorInfo* embd = file.find_tensor("token_embd.weight");
    if (!embd) throw Error(file.name() + ": missing tensor 'token_embd.weight'");
    hp_.n_vocab = embd->shape[1];
    WeightBinder binder(file, backend, progress);
    w_ = bind_qwen35_weights(hp_, binder);
    for (const Qwen35Layer& l : w_.layers) (l.recurrent ? n_recurrent_ : n_attention_) += 1;
    if (w_.mtp) mtp_.emplace(*this);

    info_.architecture = "qwen35moe";
    info_.name = std::string(file.get_string("general.name", ""));
    static_cast<ModelShape&>(info_) = hp_;
    info_.n_params = binder.bound_elements();
    info_.weight_bytes = binder.bound_bytes();
    info_.recurrent = true;
    weight_buffers_ = binder.take_buffers();
}

std::unique_ptr<SequenceState> Qwen35MoeModel::create_state(const StateOptions& options) const {
    if (options.n_ctx <= 0) throw Error("context size must be positive");
    return std::make_unique<Qwen35State>(backend_, hp_, options, n_attention_, n_recurrent_, max_batch(), false);
}

void Qwen35MoeModel::gated_attention(Qwen35State& st, const Qwen35Layer& l, const Tensor& h, int64_t n,
                                     const Tensor& out, const ResidualNorm* then) const {
    Qwen35Activations& act = st.act;
    const AttentionScratch scratch{act.q.row_range(0, n),    act.k.row_range(0, n),      act.v.row_range(0, n),
                                   act.attn.row_range(0, n), act.attn_p.row_range(0, n), act.gate.row_range(0, n)};
    // Text positions make the interleaved multi-section RoPE plain partial NeoX RoPE (§5.3); image rows need the
    // (t, h, w) axes (vision-qwen3vl.md §6).
    AttentionPlacement at;
    at.rope.mode = st.mrope.empty() ? RopeMode::neox : RopeMode::multi_interleaved;
    at.rope.n_rot = hp_.n_rot;
    at.rope.freq_base = hp_.rope_base;
    std::copy(std::begin(hp_.sections), std::end(hp_.sections), std::begin(at.rope.sections));
    at.positions = st.mrope.empty() ? std::span<const int32_t>(st.positions) : st.mrope;
    const size_t cache = static_cast<size_t>(l.cache_index);
    at.k_cache = &st.kv().k(cache);
    at.v_cache = &st.kv().v(cache);
    at.cache_rows = at.query_rows = st.slots;
    at.n_kv = st.slots.back() + 1;
    const int64_t hd = hp_.head_dim;
    at.params = {static_cast<int>(hp_.n_head), static_cast<int>(hp_.n_head_kv), static_cast<int>(hd),
                 1.0f / std::sqrt(static_cast<float>(hd))};
    attention_block(backend_, l.attn, at, hp_.eps, h, scratch, out, then);
}

void Qwen35MoeModel::gated_deltanet(Qwen35State& st, const Qwen35Layer& l, const Tensor& h, int64_t n,
                                    bool recurrent_form, const Tensor& out, const ResidualNorm* then) const {
    Backend& be = backend_;
    const DeltaNetWeights& d = l.deltanet;
    Qwen35Activations& act = st.act;
    const int64_t kd = hp_.key_dim();
    const Tensor mix = act.mix.row_range(0, n), conv = act.conv.row_range(0, n), z = act.z.row_range(0, n),
                 o = act.o.row_range(0, n), beta = act.beta.row_range(0, n), g = act.g.row_range(0, n);
    const Product products[] = {{&d.wqkv, mix}, {&d.wgate, z}, {&d.wbeta, beta}, {&d.walpha, g}};
    be.matmul_many(h, products);
    const Tensor q = conv.column_range(0, kd), k = conv.column_range(kd, kd),
                 v = conv.column_range(2 * kd, hp_.value_dim);
    DeltaRuleArgs args;
    args.q = q;
    args.k = k;
    args.v = v;
    args.g = g;
    args.beta = beta;
    args.state = st.delta_state(l.cache_index);
    args.out = o;
    const std::optional<Tensor> snapshots = st.delta_snapshots(l.cache_index);
    args.snapshots = snapshots ? &*snapshots : nullptr;
    args.n_k_heads = static_cast<int>(hp_.h_k);
    args.n_v_heads = static_cast<int>(hp_.h_v);
    args.d_k = static_cast<int>(hp_.d_k);
    args.d_v = static_cast<int>(hp_.d_v);
    args.q_scale = 1.0f / std::sqrt(static_cast<float>(hp_.d_k));
    args.chunk_size = recurrent_form ? 0 : 64;
    st.save_conv_before(l.cache_index);
    if (recurrent_form) {
        // Gates, convolution, norms, the delta rule and the gated norm: one operation (a GPU runs one kernel).
        be.deltanet_recurrent({args, mix, d.conv, st.conv_state(l.cache_index), conv, d.dt_bias, d.a, z, d.norm,
                               hp_.eps, hp_.eps});
        st.record_conv_snapshots(l.cache_index, mix, n);
    } else {
        // beta = sigmoid(beta); g = ssm_a * softplus(alpha + dt_bias) <= 0 (§5.4 step 5)
        be.deltanet_gates(beta, g, d.dt_bias, d.a);
        be.conv1d_causal_silu(mix, d.conv, st.conv_state(l.cache_index), conv);
        st.record_conv_snapshots(l.cache_index, mix, n);
        // q and k are adjacent heads of d_k: one norm for both.
        const Tensor qk = conv.column_range(0, 2 * kd);
        be.l2_norm(qk, static_cast<int>(hp_.d_k), hp_.eps, qk);
        be.delta_rule(args);
        be.rms_norm_gated(o.reshaped(hp_.d_v), d.norm, z.reshaped(hp_.d_v), hp_.eps, o.reshaped(hp_.d_v));
    }
    if (then) return be.matmul_add_rms_norm(d.wout, o, out, nullptr, then->residual, then->norm, then->eps, then->out);
    be.matmul(d.wout, o, out);
}

void Qwen35MoeModel::moe(Qwen35State& st, const MoeWeights& m, const Tensor& h, int64_t n, const Tensor& out,
                         const ResidualNorm* then) const {
    Qwen35Activations& act = st.act;
    const int64_t used = hp_.n_expert_used;
    const RoutedExpertScratch scratch{act.router.row_range(0, n),         act.expert_ids.row_range(0, n),
                                      act.expert_weights.row_range(0, n), act.exp_gate.row_range(0, n * used),
                                      act.exp_up.row_range(0, n * used),  act.exp_down.row_range(0, n * used)};
    // The shared expert, scaled by a per-token sigmoid gate (§5.5 step 5).
    const SharedExpert shared{m.shared, m.shared_gate, act.sh_up.row_range(0, n), act.sh_gate.row_range(0, n),
                              act.sh_out.row_range(0, n), act.shared_scale.row_range(0, n)};
    routed_experts(backend_, m.routed, hp_.n_expert, static_cast<int>(used), Activation::silu, h, scratch, out, &shared,
                   then);
}

void Qwen35MoeModel::forward(SequenceState& base, const ForwardRequest& request, std::vector<float>& logits) const {
    auto& st = static_cast<Qwen35State&>(base);
    const int64_t n = static_cast<int64_t>(request.tokens.size());
    if (n == 0 || n > st.batch())
        throw Error("forward: batch of " + std::to_string(n) + " tokens (1 to " + std::to_string(st.batch()) + ")");
    if (request.first_position != st.position())
        throw Error("forward: tokens start at position " + std::to_string(request.first_position) +
                    " but the state holds " + std::to_string(st.position()));
    if (st.position() + n > st.capacity())
        throw Error("context full: " + std::to_string(st.position() + n) + " positions needed, the context holds " +
                    std::to_string(st.capacity()));
    st.begin_batch(n, request.rollback);
    Backend& be = backend_;
    const Tensor x = st.act.x.row_range(0, n), h = st.act.h.row_range(0, n), h2 = st.act.h2.row_range(0, n);
    // Rows that may be rolled back (verification) use the token-by-token form, so they equal plain decoding.
    const bool recurrent_form = n == 1 || request.rollback > 0;
    LayerCapture capture(request, n, hp_.n_embd);
    be.get_rows(w_.token_embd, request.tokens, x);
    take_image_rows(st, request, n, x);
    // Each residual add joins the norm after it: x += mixer(h); h = norm(x); x += moe(h); h = next layer's norm(x).
    if (!w_.layers.empty()) {
        capture.at_layer(be, 0, x);
        be.rms_norm(x, w_.layers[0].attn_norm, hp_.eps, h);
    }
    for (size_t il = 0; il < w_.layers.size(); ++il) {
        const Qwen35Layer& l = w_.layers[il];
        // Each sub-layer ends with the residual add and the norm after it.
        const ResidualNorm post{x, l.post_attention_norm, hp_.eps, h};
        if (l.recurrent)
            gated_deltanet(st, l, h, n, recurrent_form, h2, &post);
        else
            gated_attention(st, l, h, n, h2, &post);
        if (il + 1 == w_.layers.size()) {
            moe(st, l.moe, h, n, h2);
            be.add(x, h2, x);
            break;
        }
        // The block ends with the residual add and the next layer's input norm.
        const ResidualNorm next{x, w_.layers[il + 1].attn_norm, hp_.eps, h};
        moe(st, l.moe, h, n, h2, &next);
        capture.at_layer(be, static_cast<int64_t>(il + 1), x);
    }
    st.end_batch(n);
    const int64_t n_out = request.all_logits ? n : 1;
    finish_forward(be, request, x, w_.output_norm, hp_.eps, h, w_.output, st.logits(n_out), logits, capture,
                   hp_.n_layer);
}

void Qwen35MoeModel::take_image_rows(Qwen35State& st, const ForwardRequest& request, int64_t n, const Tensor& x) const {
    const int64_t e = hp_.n_embd;
    for (const ForwardRequest::EmbeddedRows& rows : request.embedded) {
        if (rows.first_row < 0 || rows.n_rows <= 0 || rows.first_row + rows.n_rows > n)
            throw Error("forward: embedded rows [" + std::to_string(rows.first_row) + ", " +
                        std::to_string(rows.first_row + rows.n_rows) + ") outside the batch of " + std::to_string(n));
        if (static_cast<int64_t>(rows.embeddings.size()) != rows.n_rows * e)
            throw Error("forward: " + std::to_string(rows.embeddings.size()) + " embedding values for " +
                        std::to_string(rows.n_rows) + " rows of " + std::to_string(e));
        backend_.write(x.row_range(rows.first_row, rows.n_rows), std::as_bytes(rows.embeddings));
    }
    if (request.rope_positions.empty()) return;
    if (static_cast<int64_t>(request.rope_positions.size()) != 3 * n)
        throw Error("forward: " + std::to_string(request.rope_positions.size()) + " M-RoPE positions for " +
                    std::to_string(n) + " rows (3 per row)");
    st.mrope.assign(request.rope_positions.begin(), request.rope_positions.end());
}

// --- the MTP head (speculative.md §2.2) --------------------------------------------------------------------------

std::unique_ptr<SequenceState> Qwen35Mtp::create_state(const StateOptions& options) const {
    if (options.n_ctx <= 0) throw Error("context size must be positive");
    return std::make_unique<Qwen35State>(model_.backend_, model_.hp_, options, 1, 0, model_.max_batch(), true);
}

void Qwen35Mtp::forward(SequenceState& base, std::span<const int32_t> tokens, std::span<const float> hiddens,
                        int32_t first_position, std::vector<float>& logits, std::vector<float>& hidden,
                        bool all_rows) const {
    auto& st = static_cast<Qwen35State&>(base);
    const Qwen35HParams& hp = model_.hp_;
    const MtpWeights& m = *model_.w_.mtp;
    const int64_t n = static_cast<int64_t>(tokens.size());
    const int64_t e = hp.n_embd;
    if (n == 0 || n > st.batch()) throw Error("mtp: batch of " + std::to_string(n) + " tokens");
    if (static_cast<int64_t>(hiddens.size()) != n * e)
        throw Error("mtp: " + std::to_string(hiddens.size()) + " hidden values for " + std::to_string(n) + " rows of " +
                    std::to_string(e));
    if (st.position() == 0) st.set_origin(first_position);
    if (first_position != st.position())
        throw Error("mtp: tokens start at position " + std::to_string(first_position) + " but the state holds " +
                    std::to_string(st.position()));
    if (st.position() + n > st.capacity()) throw Error("mtp: context full");
    st.begin_batch(n, 0);
    Backend& be = model_.backend_;
    const Tensor x = st.act.x.row_range(0, n), h = st.act.h.row_range(0, n), h2 = st.act.h2.row_range(0, n),
                 cat = st.act.mtp_cat.row_range(0, n);
    // c = [rms_norm(E[token]; enorm) ‖ rms_norm(h; hnorm)], the embedding half first.
    be.get_rows(m.embed_tokens ? *m.embed_tokens : model_.w_.token_embd, tokens, x);
    be.rms_norm(x, m.enorm, hp.eps, cat.column_range(0, e));
    be.write(h, std::as_bytes(hiddens));
    be.rms_norm(h, m.hnorm, hp.eps, cat.column_range(e, e));
    be.matmul(m.eh_proj, cat, x);
    be.rms_norm(x, m.layer.attn_norm, hp.eps, h);
    const ResidualNorm post{x, m.layer.post_attention_norm, hp.eps, h};
    model_.gated_attention(st, m.layer, h, n, h2, &post);
    model_.moe(st, m.layer.moe, h, n, h2);
    be.add(x, h2, x);
    st.end_batch(n);
    ForwardRequest request{tokens, first_position, all_rows};
    request.hidden = &hidden;
    LayerCapture none(request, n, e);
    finish_forward(be, request, x, m.shared_head_norm ? *m.shared_head_norm : model_.w_.output_norm, hp.eps, h,
                   m.head ? *m.head : model_.w_.output, st.logits(n), logits, none, -1);
}

}  // namespace ember::model
