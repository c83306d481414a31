// SPDX-License-Identifier: MIT
// Hyperparameters of decoder-only transformers, read from `<arch>.*` keys with llama.cpp's names.
#pragma once

#include <string>

#include "ember/backend.h"
#include "ember/gguf.h"

namespace ember::model {

struct TransformerHParams {
    std::string arch;
    int64_t n_vocab = 0;
    int64_t n_ctx_train = 0;
    int64_t n_embd = 0;
    int64_t n_layer = 0;
    int64_t n_head = 0;
    int64_t n_head_kv = 0;
    int64_t head_dim = 0;    // attention.key_length, default n_embd / n_head
    int64_t head_dim_v = 0;  // attention.value_length, default head_dim
    int64_t n_ff = 0;
    // Mixture of experts (qwen3moe): every layer's feed-forward is n_expert experts of n_ff_exp rows, n_expert_used
    // of them per token; 0 for dense models.
    int64_t n_expert = 0;
    int64_t n_expert_used = 0;
    int64_t n_ff_exp = 0;
    float rms_eps = 1e-5f;
    RopeParams rope;
};

// Reads the keys every decoder-only transformer has. Throws ember::Error naming the file and key.
TransformerHParams read_transformer_hparams(const gguf::File& file, const std::string& arch, RopeMode rope_mode);

}  // namespace ember::model
