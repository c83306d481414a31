// SPDX-License-Identifier: MIT
// Hyperparameters of decoder-only transformers, read from `<arch>.*` keys with llama.cpp's names.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "ember/gguf.h"
#include "ember/model_info.h"
#include "model/rope_yarn.h"

namespace ember::model {

// The largest batch the Llama-family models run in one forward pass.
constexpr int64_t kTransformerMaxBatch = gguf::kTransformerMaxBatch;

// head_dim: attention.key_length, default n_embd / n_head.
struct TransformerHParams : ModelShape {
    std::string arch;
    int64_t head_dim_v = 0;  // attention.value_length, default head_dim
    int64_t n_ff = 0;
    // Mixture of experts (qwen3moe): every layer's feed-forward is n_expert experts of n_ff_exp rows, n_expert_used
    // of them per token; 0 for dense models.
    int64_t n_expert = 0;
    int64_t n_expert_used = 0;
    int64_t n_ff_exp = 0;
    float rms_eps = 1e-5f;
    RopeParams rope;
    std::optional<YarnScaling> yarn;  // rope.scaling.type = yarn
    // 0: 1/sqrt(head_dim).
    float attention_scale = 0.0f;
    // Gemma 3: the embeddings are multiplied by sqrt(n_embd); local layers attend within a sliding window of
    // sliding_window rows, with their own RoPE.
    float embedding_scale = 1.0f;
    int64_t sliding_window = 0;
    std::vector<bool> local_layers;  // per layer; empty: every layer global
    RopeParams rope_local;

    bool is_local_layer(int64_t il) const {
        return sliding_window > 0 && il < static_cast<int64_t>(local_layers.size()) &&
               local_layers[static_cast<size_t>(il)];
    }
    // Rows of a local layer's KV cache for batches of up to max_batch tokens: the window slides through twice its
    // length plus a batch, so that moving the last window's rows to the front never overlaps them.
    int64_t local_cache_rows(int64_t n_ctx, int64_t max_batch) const {
        return gguf::sliding_window_cache_rows(sliding_window, n_ctx, max_batch);
    }
    // Rows of layer il's KV cache at context n_ctx, for batches of up to max_batch tokens.
    int64_t kv_cache_rows(int64_t il, int64_t n_ctx, int64_t max_batch) const {
        return is_local_layer(il) ? local_cache_rows(n_ctx, max_batch) : n_ctx;
    }
};

// Reads the keys every decoder-only transformer has. Throws ember::Error naming the file and key. With
// RequiredKeys::for_memory_shape it reads only the shape (no norms, RoPE or attention scale), and a feed-forward
// or expert key that is missing stays 0.
TransformerHParams read_transformer_hparams(const gguf::File& file, const std::string& arch, RopeMode rope_mode,
                                            RequiredKeys required = RequiredKeys::for_loading);

// The memory shape of a Llama-family file (its registry entry's reader).
MemoryShape transformer_memory_shape(const gguf::File& file, const std::string& arch, RequiredKeys required);

}  // namespace ember::model
