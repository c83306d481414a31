// SPDX-License-Identifier: MIT
// Hyperparameters of `qwen35moe` (../specs/qwen35moe.md §2): the trunk's layer pattern, gated attention, Gated
// DeltaNet and mixture-of-experts sizes, and the MTP blocks after the trunk.
#pragma once

#include <string>
#include <vector>

#include "ember/gguf.h"
#include "ember/model_info.h"

namespace ember::model {

// Tokens per forward pass: a prefill of 512 tokens routes about 16 slots to each of 256 experts, so the expert
// products decode each expert's weights once for that many tokens.
inline constexpr int64_t kQwen35MaxBatch = 512;

// n_layer: the trunk's layers, block_count - n_nextn.
struct Qwen35HParams : ModelShape {
    int64_t block_count = 0;
    int64_t n_nextn = 0;  // MTP blocks after the trunk
    std::vector<bool> recurrent;  // per block: Gated DeltaNet (true) or gated full attention
    // gated attention: n_head, n_head_kv, head_dim (ModelShape) and
    int n_rot = 0;
    int sections[4] = {0, 0, 0, 0};
    float rope_base = 1e7f;
    float eps = 1e-6f;
    // Gated DeltaNet
    int64_t conv_kernel = 0;
    int64_t d_k = 0;  // ssm.state_size
    int64_t h_k = 0;  // ssm.group_count
    int64_t h_v = 0;  // ssm.time_step_rank
    int64_t d_v = 0;
    int64_t value_dim = 0;  // ssm.inner_size = h_v * d_v
    int64_t key_dim() const { return h_k * d_k; }
    int64_t conv_dim() const { return 2 * key_dim() + value_dim; }
    // One recurrent layer's state: the SSM state (h_v heads of d_k x d_v) and the last conv_kernel - 1 conv inputs.
    int64_t recurrent_state_floats() const { return d_k * value_dim + (conv_kernel - 1) * conv_dim(); }
    // mixture of experts
    int64_t n_expert = 0;
    int64_t n_expert_used = 0;
    int64_t n_ff_exp = 0;
    int64_t n_ff_shexp = 0;
};

// Throws ember::Error naming the file and key for a missing or inconsistent value. With
// RequiredKeys::for_memory_shape it reads only the shape (no norms or RoPE), and a missing expert key or
// ssm.time_step_rank stays 0.
Qwen35HParams read_qwen35_hparams(const gguf::File& file, RequiredKeys required = RequiredKeys::for_loading);

// The memory shape of a qwen35moe file (its registry entry's reader).
MemoryShape qwen35_memory_shape(const gguf::File& file, const std::string& arch, RequiredKeys required);

}  // namespace ember::model
