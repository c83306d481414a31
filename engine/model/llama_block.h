// SPDX-License-Identifier: MIT
// One block of a Llama-family transformer, as LlamaFamilyModel and the DFlash draft (a Qwen3-style stack) hold it.
#pragma once

#include <optional>

#include "backend/backend.h"
#include "model/attention_block.h"
#include "model/gated_ffn.h"
#include "model/routed_experts.h"

namespace ember::model {

struct LlamaLayer {
    Tensor attn_norm;              // [n_embd]
    AttentionWeights attn;
    std::optional<Tensor> post_ffn_norm;  // [n_embd]  (gemma3: on the feed-forward's output)
    Tensor ffn_norm;               // [n_embd]
    GatedFfnWeights ffn;           //                  (dense)
    RoutedExpertWeights experts;   //                  (qwen3moe, gpt-oss)
};

}  // namespace ember::model
