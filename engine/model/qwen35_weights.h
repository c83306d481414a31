// SPDX-License-Identifier: MIT
// The tensors of a `qwen35moe` file (../specs/qwen35moe.md §3), bound with their shapes checked.
#pragma once

#include <optional>
#include <vector>

#include "backend/backend.h"
#include "model/attention_block.h"
#include "model/gated_ffn.h"
#include "model/qwen35_hparams.h"
#include "model/routed_experts.h"

namespace ember::model {

struct DeltaNetWeights {
    Tensor wqkv;      // [n_embd, conv_dim]  q ‖ k ‖ v
    Tensor wgate;     // [n_embd, value_dim] z
    Tensor wbeta;     // [n_embd, h_v]
    Tensor walpha;    // [n_embd, h_v]
    Tensor conv;      // [conv_kernel, conv_dim] (rows = channels)
    Tensor dt_bias;   // [h_v]
    Tensor a;         // [h_v] = -exp(A_log)
    Tensor norm;      // [d_v]
    Tensor wout;      // [value_dim, n_embd]
};

struct MoeWeights {
    RoutedExpertWeights routed;
    Tensor shared_gate;  // [n_embd] (one row)
    GatedFfnWeights shared;  // n_ff_shexp wide
};

struct Qwen35Layer {
    bool recurrent = false;
    int64_t cache_index = -1;  // attention layers: their KV cache; recurrent layers: their state
    Tensor attn_norm;            // [n_embd]
    Tensor post_attention_norm;  // [n_embd]
    AttentionWeights attn;  // gated output
    DeltaNetWeights deltanet;
    MoeWeights moe;
};

struct MtpWeights {
    Tensor eh_proj;                        // [2 * n_embd, n_embd]
    Tensor enorm;                          // [n_embd]
    Tensor hnorm;                          // [n_embd]
    std::optional<Tensor> shared_head_norm;  // [n_embd]
    std::optional<Tensor> embed_tokens;    // [n_embd, n_vocab] (else token_embd)
    std::optional<Tensor> head;            // [n_embd, n_vocab] (else output)
    Qwen35Layer layer;                     // gated attention + MoE
};

struct Qwen35Weights {
    Tensor token_embd;   // [n_embd, n_vocab]
    Tensor output_norm;  // [n_embd]
    Tensor output;       // [n_embd, n_vocab] (token_embd when tied)
    std::vector<Qwen35Layer> layers;  // the trunk
    std::optional<MtpWeights> mtp;    // the first MTP block, when present
};

class WeightBinder;
Qwen35Weights bind_qwen35_weights(const Qwen35HParams& hp, WeightBinder& binder);

}  // namespace ember::model
