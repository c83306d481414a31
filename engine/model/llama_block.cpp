// SPDX-License-Identifier: MIT
// The Llama-family block's weight binding, attention projections and dense feed-forward.
#include "model/llama_block.h"

namespace ember::model {

void bind_llama_attention(WeightBinder& w, const std::string& b, const LlamaAttentionShape& s, bool qk_norm,
                          LlamaLayer& l) {
    const int64_t e = s.n_embd, q_width = s.n_head * s.head_dim, k_width = s.n_head_kv * s.head_dim,
                  v_width = s.n_head_kv * s.head_dim_v;
    l.attn_norm = w.require_f32(b + "attn_norm.weight", {e});
    l.wq = w.require(b + "attn_q.weight", {e, q_width});
    l.wk = w.require(b + "attn_k.weight", {e, k_width});
    l.wv = w.require(b + "attn_v.weight", {e, v_width});
    l.wo = w.require(b + "attn_output.weight", {s.n_head * s.head_dim_v, e});
    l.bq = w.optional_f32(b + "attn_q.bias", {q_width});
    l.bk = w.optional_f32(b + "attn_k.bias", {k_width});
    l.bv = w.optional_f32(b + "attn_v.bias", {v_width});
    l.bo = w.optional_f32(b + "attn_output.bias", {e});
    if (qk_norm) {
        l.q_norm = w.require_f32(b + "attn_q_norm.weight", {s.head_dim});
        l.k_norm = w.require_f32(b + "attn_k_norm.weight", {s.head_dim});
    }
}

void bind_dense_feed_forward(WeightBinder& w, const std::string& b, int64_t n_embd, int64_t n_ff, LlamaLayer& l) {
    l.ffn_gate = w.require(b + "ffn_gate.weight", {n_embd, n_ff});
    l.ffn_up = w.require(b + "ffn_up.weight", {n_embd, n_ff});
    l.ffn_down = w.require(b + "ffn_down.weight", {n_ff, n_embd});
}

void project_qkv(Backend& be, const LlamaLayer& l, const Tensor& h, int64_t head_dim, float eps, const Tensor& q,
                 const Tensor& k, const Tensor& v) {
    be.matmul(l.wq, h, q, l.bq ? &*l.bq : nullptr);
    be.matmul(l.wk, h, k, l.bk ? &*l.bk : nullptr);
    be.matmul(l.wv, h, v, l.bv ? &*l.bv : nullptr);
    if (l.q_norm) be.rms_norm(q.reshaped(head_dim), *l.q_norm, eps, q.reshaped(head_dim));
    if (l.k_norm) be.rms_norm(k.reshaped(head_dim), *l.k_norm, eps, k.reshaped(head_dim));
}

void dense_feed_forward(Backend& be, const LlamaLayer& l, Activation act, const Tensor& h, const Tensor& up_scratch,
                        const Tensor& gate, const Tensor& out) {
    be.matmul_gated(act, l.ffn_gate, l.ffn_up, h, up_scratch, gate);
    be.matmul(l.ffn_down, gate, out);
}

}  // namespace ember::model
