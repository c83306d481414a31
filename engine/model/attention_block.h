// SPDX-License-Identifier: MIT
// The attention sub-layer every transformer here runs: Q/K/V projections, QK norms, RoPE, KV store, attention, output.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "backend/backend.h"
#include "model/residual_norm.h"
#include "model/weight_binder.h"

namespace ember::model {

// One layer's attention weights. What an architecture lacks stays empty.
struct AttentionWeights {
    Tensor wq;                      // [n_embd, n_head * head_dim]; gated_output: [n_embd, n_head * 2 * head_dim]
    Tensor wk;                      // [n_embd, n_head_kv * head_dim]
    Tensor wv;                      // [n_embd, n_head_kv * head_dim_v]
    Tensor wo;                      // [n_head * head_dim_v, n_embd]
    std::optional<Tensor> bq;       // [Wq's width]              (qwen2)
    std::optional<Tensor> bk;       // [n_head_kv * head_dim]    (qwen2)
    std::optional<Tensor> bv;       // [n_head_kv * head_dim_v]  (qwen2)
    std::optional<Tensor> bo;       // [n_embd]                  (gpt-oss, DFlash drafts)
    std::optional<Tensor> sinks;    // [n_head]                  (gpt-oss: AttentionParams::sinks)
    std::optional<Tensor> q_norm;   // [head_dim]                (qwen3, gemma3, qwen35moe, DFlash drafts)
    std::optional<Tensor> k_norm;   // [head_dim]                (qwen3, gemma3, qwen35moe, DFlash drafts)
    std::optional<Tensor> out_norm; // [n_embd]                  (gemma3: on Wo·attn before the residual add)
    // qwen35moe: per head, Wq yields q then a gate; attn is multiplied by sigmoid(gate) before Wo. Needs q_norm.
    bool gated_output = false;
};

// The widths of a layer's attention.
struct AttentionShape {
    int64_t n_embd = 0;
    int64_t n_head = 0, n_head_kv = 0;
    int64_t head_dim = 0, head_dim_v = 0;
};

// Binds `<b>attn_{q,k,v,output}.weight` with their optional biases, and `<b>attn_{q,k}_norm.weight` when qk_norm.
void bind_attention(WeightBinder& w, const std::string& b, const AttentionShape& s, bool qk_norm, bool gated_output,
                    AttentionWeights& a);

// One batch's activations for the attention (rows = the batch's tokens).
struct AttentionScratch {
    Tensor q, k, v;   // [n, n_head * head_dim], [n, n_head_kv * head_dim], [n, n_head_kv * head_dim_v]
    Tensor attn;      // [n, n_head * head_dim_v]
    Tensor q_gate;    // gated_output only: [n, n_head * 2 * head_dim] (Wq's output)
    Tensor gate;      // gated_output only: [n, n_head * head_dim]
};

// Where a batch's rows are rotated, stored and attend.
struct AttentionPlacement {
    std::span<const int32_t> positions;    // RoPE positions (M-RoPE: 3 per row, axis-major)
    RopeParams rope;
    const Tensor* rope_factors = nullptr;  // Backend::rope's freq_factors
    const Tensor* k_cache = nullptr;
    const Tensor* v_cache = nullptr;
    std::span<const int32_t> cache_rows;   // the cache rows the batch's keys and values go to
    std::span<const int32_t> query_rows;   // the cache row each query sits at (Backend::attention's positions)
    int64_t n_kv = 0;                      // cache rows [0, n_kv) are attended
    AttentionParams params;                // sinks come from the weights
};

// out = Wo·attn(rope(q_norm(Wq h)), rope(k_norm(Wk h)), Wv h) for the normed rows h, with the layer's biases, output
// gate and output norm, then `then` if given. out and then->out may alias h.
void attention_block(Backend& be, const AttentionWeights& a, const AttentionPlacement& at, float eps, const Tensor& h,
                     const AttentionScratch& s, const Tensor& out, const ResidualNorm* then = nullptr);

// Only the keys and values of the rows g into the cache (the DFlash draft's injected context): Wk, Wv, k_norm, RoPE.
void store_attention_kv(Backend& be, const AttentionWeights& a, const AttentionPlacement& at, float eps,
                        const Tensor& g, const Tensor& k, const Tensor& v);

}  // namespace ember::model
