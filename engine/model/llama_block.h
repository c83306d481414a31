// SPDX-License-Identifier: MIT
// One block of a Llama-family transformer: its weights, how they are bound, and the attention projections and
// dense feed-forward that LlamaFamilyModel and the DFlash draft (a Qwen3-style stack) both run.
#pragma once

#include <optional>
#include <string>

#include "backend/backend.h"
#include "model/routed_experts.h"
#include "model/weight_binder.h"

namespace ember::model {

struct LlamaLayer {
    Tensor attn_norm;              // [n_embd]
    Tensor wq;                     // [n_embd, n_head * head_dim]
    Tensor wk;                     // [n_embd, n_head_kv * head_dim]
    Tensor wv;                     // [n_embd, n_head_kv * head_dim_v]
    Tensor wo;                     // [n_head * head_dim_v, n_embd]
    std::optional<Tensor> bq;      // [n_head * head_dim]       (qwen2)
    std::optional<Tensor> bk;      // [n_head_kv * head_dim]    (qwen2)
    std::optional<Tensor> bv;      // [n_head_kv * head_dim_v]  (qwen2)
    std::optional<Tensor> bo;      // [n_embd]                  (gpt-oss, DFlash drafts)
    std::optional<Tensor> sinks;   // [n_head]                  (gpt-oss: AttentionParams::sinks)
    std::optional<Tensor> q_norm;  // [head_dim]                (qwen3, gemma3, DFlash drafts)
    std::optional<Tensor> k_norm;  // [head_dim]                (qwen3, gemma3, DFlash drafts)
    std::optional<Tensor> post_attn_norm;  // [n_embd]          (gemma3: on Wo·attn before the residual add)
    std::optional<Tensor> post_ffn_norm;   // [n_embd]          (gemma3: on the feed-forward's output)
    Tensor ffn_norm;               // [n_embd]
    Tensor ffn_gate;               // [n_embd, n_ff]            (dense)
    Tensor ffn_up;                 // [n_embd, n_ff]            (dense)
    Tensor ffn_down;               // [n_ff, n_embd]            (dense)
    RoutedExpertWeights experts;   //                           (qwen3moe, gpt-oss)
};

// The widths of a block's attention.
struct LlamaAttentionShape {
    int64_t n_embd = 0;
    int64_t n_head = 0, n_head_kv = 0;
    int64_t head_dim = 0, head_dim_v = 0;
};

// Binds `<b>attn_norm`, `<b>attn_{q,k,v,output}.weight` with their optional biases, and `<b>attn_{q,k}_norm` when
// qk_norm.
void bind_llama_attention(WeightBinder& w, const std::string& b, const LlamaAttentionShape& s, bool qk_norm,
                          LlamaLayer& l);
// Binds `<b>ffn_{gate,up,down}.weight` of a dense feed-forward n_ff wide.
void bind_dense_feed_forward(WeightBinder& w, const std::string& b, int64_t n_embd, int64_t n_ff, LlamaLayer& l);

// q, k, v of the normed rows h: the projections with their biases, then the per-head RMS norms of q and k where
// the block has them.
void project_qkv(Backend& be, const LlamaLayer& l, const Tensor& h, int64_t head_dim, float eps, const Tensor& q,
                 const Tensor& k, const Tensor& v);
// out = Wdown · act(Wgate h, Wup h); up_scratch as Backend::matmul_gated's, gate the activation rows.
void dense_feed_forward(Backend& be, const LlamaLayer& l, Activation act, const Tensor& h, const Tensor& up_scratch,
                        const Tensor& gate, const Tensor& out);

}  // namespace ember::model
