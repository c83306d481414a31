// SPDX-License-Identifier: MIT
// Binding qwen35moe's tensors with their shapes checked.
#include "model/qwen35_weights.h"

#include "model/weight_binder.h"

namespace ember::model {

namespace {

Qwen35Layer bind_layer(const Qwen35HParams& hp, WeightBinder& w, int64_t i, bool recurrent) {
    const std::string b = "blk." + std::to_string(i) + ".";
    const int64_t e = hp.n_embd;
    Qwen35Layer l;
    l.recurrent = recurrent;
    l.attn_norm = w.require_f32(b + "attn_norm.weight", {e});
    l.post_attention_norm = w.require_f32(b + "post_attention_norm.weight", {e});
    if (recurrent) {
        DeltaNetWeights& d = l.deltanet;
        d.wqkv = w.require(b + "attn_qkv.weight", {e, hp.conv_dim()});
        d.wgate = w.require(b + "attn_gate.weight", {e, hp.value_dim});
        d.wbeta = w.require(b + "ssm_beta.weight", {e, hp.h_v});
        d.walpha = w.require(b + "ssm_alpha.weight", {e, hp.h_v});
        d.conv = w.require_f32(b + "ssm_conv1d.weight", {hp.conv_kernel, hp.conv_dim()});
        d.dt_bias = w.require_f32(b + "ssm_dt.bias", {hp.h_v});
        d.a = w.require_f32(b + "ssm_a", {hp.h_v});
        d.norm = w.require_f32(b + "ssm_norm.weight", {hp.d_v});
        d.wout = w.require(b + "ssm_out.weight", {hp.value_dim, e});
    } else {
        const AttentionShape shape{e, hp.n_head, hp.n_head_kv, hp.head_dim, hp.head_dim};
        bind_attention(w, b, shape, true, true, l.attn);
    }
    MoeWeights& m = l.moe;
    m.routed.router = w.require(b + "ffn_gate_inp.weight", {e, hp.n_expert});
    m.routed.gate_exps = w.require(b + "ffn_gate_exps.weight", {e, hp.n_ff_exp, hp.n_expert});
    m.routed.up_exps = w.require(b + "ffn_up_exps.weight", {e, hp.n_ff_exp, hp.n_expert});
    m.routed.down_exps = w.require(b + "ffn_down_exps.weight", {hp.n_ff_exp, e, hp.n_expert});
    m.shared_gate = w.require(b + "ffn_gate_inp_shexp.weight", {e});
    m.shared = bind_gated_ffn(w, b, "_shexp", e, hp.n_ff_shexp);
    return l;
}

}  // namespace

Qwen35Weights bind_qwen35_weights(const Qwen35HParams& hp, WeightBinder& w) {
    Qwen35Weights out;
    const int64_t e = hp.n_embd;
    out.token_embd = w.require("token_embd.weight", {e, hp.n_vocab});
    out.output_norm = w.require_f32("output_norm.weight", {e});
    out.output = w.optional("output.weight", {e, hp.n_vocab}).value_or(out.token_embd);
    int64_t attention = 0, recurrent = 0;
    for (int64_t i = 0; i < hp.n_layer; ++i) {
        const bool rec = hp.recurrent[static_cast<size_t>(i)];
        Qwen35Layer l = bind_layer(hp, w, i, rec);
        l.cache_index = rec ? recurrent++ : attention++;
        out.layers.push_back(std::move(l));
    }
    if (hp.n_nextn > 0) {
        const int64_t j = hp.n_layer;
        const std::string b = "blk." + std::to_string(j) + ".nextn.";
        MtpWeights m;
        m.eh_proj = w.require(b + "eh_proj.weight", {2 * e, e});
        m.enorm = w.require_f32(b + "enorm.weight", {e});
        m.hnorm = w.require_f32(b + "hnorm.weight", {e});
        m.shared_head_norm = w.optional_f32(b + "shared_head_norm.weight", {e});
        m.embed_tokens = w.optional(b + "embed_tokens.weight", {e, hp.n_vocab});
        m.head = w.optional(b + "shared_head_head.weight", {e, hp.n_vocab});
        m.layer = bind_layer(hp, w, j, false);
        m.layer.cache_index = 0;
        out.mtp = std::move(m);
    }
    return out;
}

}  // namespace ember::model
