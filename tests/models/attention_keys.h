// SPDX-License-Identifier: MIT
// The attention-shape keys a test GGUF for model facts and fit estimates starts with, written under its
// architecture's prefix, and the Gated DeltaNet keys of a qwen35moe one.
#pragma once

#include <cstdint>
#include <string>

#include "ember/gguf.h"

namespace ember::test {

struct AttentionKeys {
    std::string arch;
    uint32_t blocks = 0;
    uint32_t embedding = 0;
    uint32_t heads = 0;
    uint32_t kv_heads = 0;
    uint32_t head_dim = 0;  // key_length and value_length; 0 leaves both out
    uint32_t window = 0;    // attention.sliding_window; 0 leaves it out
    uint32_t context = 0;   // context_length; 0 leaves it out
};

inline void write_attention_keys(gguf::Writer& w, const AttentionKeys& k) {
    const std::string p = k.arch + ".";
    w.set("general.architecture", k.arch);
    w.set(p + "block_count", k.blocks);
    if (k.context) w.set(p + "context_length", k.context);
    w.set(p + "embedding_length", k.embedding);
    w.set(p + "attention.head_count", k.heads);
    w.set(p + "attention.head_count_kv", k.kv_heads);
    if (k.head_dim) {
        w.set(p + "attention.key_length", k.head_dim);
        w.set(p + "attention.value_length", k.head_dim);
    }
    if (k.window) w.set(p + "attention.sliding_window", k.window);
}

// Qwen3.6-35B-A3B's Gated DeltaNet sizes (qwen35moe.md §2).
inline void write_qwen36_ssm_keys(gguf::Writer& w) {
    w.set("qwen35moe.ssm.conv_kernel", uint32_t(4));
    w.set("qwen35moe.ssm.state_size", uint32_t(128));
    w.set("qwen35moe.ssm.group_count", uint32_t(16));
    w.set("qwen35moe.ssm.time_step_rank", uint32_t(32));
    w.set("qwen35moe.ssm.inner_size", uint32_t(4096));
}

}  // namespace ember::test
