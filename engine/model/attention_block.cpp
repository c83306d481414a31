// SPDX-License-Identifier: MIT
// The shared attention sub-layer: binding its weights and running it.
#include "model/attention_block.h"

namespace ember::model {

namespace {

const Tensor* bias(const std::optional<Tensor>& b) { return b ? &*b : nullptr; }

}  // namespace

void bind_attention(WeightBinder& w, const std::string& b, const AttentionShape& s, bool qk_norm, bool gated_output,
                    AttentionWeights& a) {
    const int64_t e = s.n_embd, q_width = s.n_head * s.head_dim, k_width = s.n_head_kv * s.head_dim,
                  v_width = s.n_head_kv * s.head_dim_v;
    const int64_t wq_width = gated_output ? 2 * q_width : q_width;
    a.gated_output = gated_output;
    a.wq = w.require(b + "attn_q.weight", {e, wq_width});
    a.wk = w.require(b + "attn_k.weight", {e, k_width});
    a.wv = w.require(b + "attn_v.weight", {e, v_width});
    a.wo = w.require(b + "attn_output.weight", {s.n_head * s.head_dim_v, e});
    a.bq = w.optional_f32(b + "attn_q.bias", {wq_width});
    a.bk = w.optional_f32(b + "attn_k.bias", {k_width});
    a.bv = w.optional_f32(b + "attn_v.bias", {v_width});
    a.bo = w.optional_f32(b + "attn_output.bias", {e});
    if (qk_norm) {
        a.q_norm = w.require_f32(b + "attn_q_norm.weight", {s.head_dim});
        a.k_norm = w.require_f32(b + "attn_k_norm.weight", {s.head_dim});
    }
}

void attention_block(Backend& be, const AttentionWeights& a, const AttentionPlacement& at, float eps, const Tensor& h,
                     const AttentionScratch& s, const Tensor& out, const ResidualNorm* then) {
    const int64_t hd = at.params.head_dim;
    const Product qkv[] = {{&a.wq, a.gated_output ? s.q_gate : s.q, bias(a.bq)}, {&a.wk, s.k, bias(a.bk)},
                           {&a.wv, s.v, bias(a.bv)}};
    be.matmul_many(h, qkv);
    if (a.gated_output) {
        // Per head, the projection holds q then its gate (qwen35moe.md §5.2): split while normalizing.
        const Tensor heads = s.q_gate.reshaped(2 * hd);
        be.rms_norm(heads.column_range(0, hd), *a.q_norm, eps, s.q.reshaped(hd));
        be.unary(UnaryOp::sigmoid, heads.column_range(hd, hd), s.gate.reshaped(hd));
    } else if (a.q_norm) {
        be.rms_norm(s.q.reshaped(hd), *a.q_norm, eps, s.q.reshaped(hd));
    }
    if (a.k_norm) be.rms_norm(s.k.reshaped(hd), *a.k_norm, eps, s.k.reshaped(hd));
    be.rope(s.q, static_cast<int>(hd), at.positions, at.rope, at.rope_factors);
    be.rope(s.k, static_cast<int>(hd), at.positions, at.rope, at.rope_factors);
    be.store_kv(s.k, s.v, *at.k_cache, *at.v_cache, at.cache_rows);
    AttentionParams params = at.params;
    params.sinks = bias(a.sinks);
    be.attention(s.q, *at.k_cache, *at.v_cache, at.n_kv, at.query_rows, params, s.attn);
    if (a.gated_output) be.mul(s.attn, s.gate, s.attn);
    if (then && !a.out_norm)
        return be.matmul_add_rms_norm(a.wo, s.attn, out, bias(a.bo), then->residual, then->norm, then->eps, then->out);
    be.matmul(a.wo, s.attn, out, bias(a.bo));
    if (a.out_norm) be.rms_norm(out, *a.out_norm, eps, out);
    if (then) be.add_rms_norm(then->residual, out, then->norm, then->eps, then->out);
}

void store_attention_kv(Backend& be, const AttentionWeights& a, const AttentionPlacement& at, float eps,
                        const Tensor& g, const Tensor& k, const Tensor& v) {
    const int64_t hd = at.params.head_dim;
    be.matmul(a.wk, g, k, bias(a.bk));
    be.matmul(a.wv, g, v, bias(a.bv));
    if (a.k_norm) be.rms_norm(k.reshaped(hd), *a.k_norm, eps, k.reshaped(hd));
    be.rope(k, static_cast<int>(hd), at.positions, at.rope, at.rope_factors);
    be.store_kv(k, v, *at.k_cache, *at.v_cache, at.cache_rows);
}

}  // namespace ember::model
