// SPDX-License-Identifier: MIT
// Reading the transformer family's hyperparameters from <arch>.* keys.
#include "model/hparams.h"

#include <cmath>
#include <cstdint>

#include "model/architecture_registry.h"

namespace ember::model {

namespace {

[[noreturn]] void bad(const gguf::File& file, const std::string& key, const std::string& problem) {
    throw Error(file.name() + ": key '" + key + "' " + problem);
}

int64_t positive(const gguf::File& file, const std::string& key, int64_t value, int64_t max = int64_t{1} << 31) {
    if (value <= 0 || value > max) bad(file, key, "is " + std::to_string(value) + ", out of range");
    return value;
}

// Gemma 3's keys and the facts its converter leaves out, as Hugging Face's Gemma3TextConfig has them: local layers
// (gguf::read_sliding_window) use RoPE base 10000 unscaled; attention scores are scaled by
// 1/sqrt(query_pre_attn_scalar), which is head_dim except in the 27B model (62 layers: n_embd / n_head).
void read_gemma3_hparams(const gguf::File& file, TransformerHParams& hp) {
    const std::string p = hp.arch + ".";
    hp.embedding_scale = std::sqrt(static_cast<float>(hp.n_embd));
    hp.rope_local.freq_base = 10000.0f;
    hp.rope_local.freq_scale = 1.0f;
    const int64_t pre_attn_scalar = hp.n_layer == 62 ? hp.n_embd / hp.n_head : hp.head_dim;
    hp.attention_scale = static_cast<float>(file.get_float(p + "attention.scale",
                                                           1.0 / std::sqrt(static_cast<double>(pre_attn_scalar))));
    if (!(hp.attention_scale > 0.0f)) bad(file, p + "attention.scale", "must be positive");
}

YarnScaling read_yarn(const gguf::File& file, const std::string& p, const std::string& arch) {
    YarnScaling yarn;
    yarn.factor = file.get_float(p + "rope.scaling.factor", 1.0);
    if (!(yarn.factor >= 1.0 && yarn.factor <= 1024.0)) bad(file, p + "rope.scaling.factor", "must be in 1..1024");
    yarn.original_context = positive(file, p + "rope.scaling.original_context_length",
                                     file.get_int(p + "rope.scaling.original_context_length"));
    yarn.beta_fast = file.get_float(p + "rope.scaling.yarn_beta_fast", 32.0);
    yarn.beta_slow = file.get_float(p + "rope.scaling.yarn_beta_slow", 1.0);
    if (!(yarn.beta_fast > 0.0 && yarn.beta_slow > 0.0 && yarn.beta_fast >= yarn.beta_slow))
        bad(file, p + "rope.scaling.yarn_beta_fast", "and yarn_beta_slow must be positive, fast >= slow");
    yarn.truncate = arch != "gpt-oss";  // gpt-oss's config sets truncate: false
    return yarn;
}

// The keys of the shape: layers, widths, heads, feed-forward and experts, the sliding window. With
// RequiredKeys::for_memory_shape, a feed-forward or expert key that is missing reads as 0.
void read_transformer_shape(const gguf::File& file, TransformerHParams& hp, RequiredKeys required) {
    const std::string p = hp.arch + ".";
    auto wanted = [&](const std::string& key) { return required == RequiredKeys::for_loading || file.has(key); };
    hp.n_layer = positive(file, p + "block_count", file.get_int(p + "block_count"), 4096);
    hp.n_embd = positive(file, p + "embedding_length", file.get_int(p + "embedding_length"));
    hp.n_head = positive(file, p + "attention.head_count", file.get_int(p + "attention.head_count"), 4096);
    hp.n_head_kv = positive(file, p + "attention.head_count_kv",
                            file.get_int(p + "attention.head_count_kv", hp.n_head), 4096);
    if (hp.n_head % hp.n_head_kv != 0)
        bad(file, p + "attention.head_count_kv",
            "is " + std::to_string(hp.n_head_kv) + ", which does not divide the head count " +
                std::to_string(hp.n_head));
    // Mixture-of-experts files may leave the dense width out (none of their layers uses it).
    const bool moe = file.has(p + "expert_count");
    if (file.has(p + "feed_forward_length") || (!moe && wanted(p + "feed_forward_length")))
        hp.n_ff = positive(file, p + "feed_forward_length", file.get_int(p + "feed_forward_length"));
    if (moe) {
        // The backends' routing takes up to 12288 experts and 64 per token (Backend::moe_route).
        hp.n_expert = positive(file, p + "expert_count", file.get_int(p + "expert_count"), 12288);
        if (wanted(p + "expert_used_count"))
            hp.n_expert_used = positive(file, p + "expert_used_count", file.get_int(p + "expert_used_count"), 64);
        if (hp.n_expert_used > hp.n_expert)
            bad(file, p + "expert_used_count", "is larger than expert_count " + std::to_string(hp.n_expert));
        if (wanted(p + "expert_feed_forward_length"))
            hp.n_ff_exp =
                positive(file, p + "expert_feed_forward_length", file.get_int(p + "expert_feed_forward_length"));
    }
    hp.n_ctx_train = positive(file, p + "context_length", file.get_int(p + "context_length", 4096));
    if (hp.n_embd % hp.n_head != 0 && !file.has(p + "attention.key_length"))
        bad(file, p + "embedding_length", "is not a multiple of the head count and no key_length is given");
    hp.head_dim = positive(file, p + "attention.key_length",
                           file.get_int(p + "attention.key_length", hp.n_embd / hp.n_head), 1024);
    hp.head_dim_v = positive(file, p + "attention.value_length",
                             file.get_int(p + "attention.value_length", hp.head_dim), 1024);
    const ArchitectureEntry* entry = find_architecture(hp.arch);
    const gguf::SlidingWindowLayout layout =
        gguf::read_sliding_window(file, hp.arch, hp.n_layer, entry ? entry->sliding_window_period : 0);
    hp.sliding_window = layout.window;
    hp.local_layers = layout.local_layers;
}

void read_rope(const gguf::File& file, TransformerHParams& hp, RopeMode rope_mode) {
    const std::string p = hp.arch + ".";
    hp.rope.mode = rope_mode;
    hp.rope.n_rot = static_cast<int>(file.get_int(p + "rope.dimension_count", hp.head_dim));
    if (hp.rope.n_rot <= 0 || hp.rope.n_rot > hp.head_dim || hp.rope.n_rot % 2 != 0)
        bad(file, p + "rope.dimension_count", "is " + std::to_string(hp.rope.n_rot) + ", must be even and at most " +
                                                  std::to_string(hp.head_dim));
    hp.rope.freq_base = static_cast<float>(file.get_float(p + "rope.freq_base", 10000.0));
    if (!(hp.rope.freq_base > 0.0f)) bad(file, p + "rope.freq_base", "must be positive");
    const std::string scaling = std::string(file.get_string(p + "rope.scaling.type", "none"));
    if (scaling == "linear") {
        const double factor = file.get_float(p + "rope.scaling.factor", 1.0);
        if (!(factor > 0.0)) bad(file, p + "rope.scaling.factor", "must be positive");
        hp.rope.freq_scale = static_cast<float>(1.0 / factor);
    } else if (scaling == "yarn") {
        hp.yarn = read_yarn(file, p, hp.arch);
    } else if (scaling != "none" && scaling != "llama3") {
        // llama3 scaling arrives as the rope_freqs.weight tensor.
        bad(file, p + "rope.scaling.type", "is '" + scaling + "' (supported: none, linear, llama3, yarn)");
    }
    hp.rope_local = hp.rope;
}

}  // namespace

TransformerHParams read_transformer_hparams(const gguf::File& file, const std::string& arch, RopeMode rope_mode,
                                            RequiredKeys required) {
    TransformerHParams hp;
    hp.arch = arch;
    read_transformer_shape(file, hp, required);
    if (required == RequiredKeys::for_memory_shape) return hp;
    const std::string p = arch + ".";
    hp.rms_eps = static_cast<float>(file.get_float(p + "attention.layer_norm_rms_epsilon", 1e-5));
    if (!(hp.rms_eps > 0.0f)) bad(file, p + "attention.layer_norm_rms_epsilon", "must be positive");
    read_rope(file, hp, rope_mode);
    if (arch == "gemma3") read_gemma3_hparams(file, hp);
    return hp;
}

}  // namespace ember::model
