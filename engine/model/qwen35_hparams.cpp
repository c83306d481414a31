// SPDX-License-Identifier: MIT
// Reading qwen35moe's hyperparameters and layer pattern.
#include "model/qwen35_hparams.h"

namespace ember::model {

namespace {

constexpr const char* kArch = "qwen35moe";

struct Reader {
    const gguf::File& file;
    RequiredKeys required;
    std::string key(const char* name) const { return std::string(kArch) + "." + name; }
    [[noreturn]] void bad(const std::string& k, const std::string& problem) const {
        throw Error(file.name() + ": key '" + k + "' " + problem);
    }
    int64_t positive(const char* name, int64_t max = int64_t{1} << 31) const {
        const int64_t v = file.get_int(key(name));
        if (v <= 0 || v > max) bad(key(name), "is " + std::to_string(v) + ", out of range");
        return v;
    }
    int64_t positive_or(const char* name, int64_t fallback) const {
        return file.has(key(name)) ? positive(name) : fallback;
    }
    // A value of key `name`, its type errors reported as the key's.
    template <class Read>
    auto read_as(const char* name, Read read) const {
        try {
            return read();
        } catch (const Error& e) {
            bad(key(name), e.what());
        }
    }
    // A key the memory shape does not depend on: 0 when missing and only the shape is asked for.
    int64_t positive_for_loading(const char* name, int64_t max = int64_t{1} << 31) const {
        return required == RequiredKeys::for_loading || file.has(key(name)) ? positive(name, max) : 0;
    }
};

void read_norm_and_rope(const Reader& r, Qwen35HParams& hp) {
    const gguf::File& file = r.file;
    hp.eps = static_cast<float>(file.get_float(r.key("attention.layer_norm_rms_epsilon"), 1e-6));
    hp.rope_base = static_cast<float>(file.get_float(r.key("rope.freq_base"), 1e7));
    hp.n_rot = static_cast<int>(r.positive_or("rope.dimension_count", hp.head_dim));
    if (hp.n_rot % 2 != 0 || hp.n_rot > hp.head_dim)
        r.bad(r.key("rope.dimension_count"), "must be even and at most the head size");
    if (const gguf::Value* sec = file.find(r.key("rope.dimension_sections"))) {
        const std::vector<int64_t> s = r.read_as("rope.dimension_sections", [&] { return sec->int_array(); });
        if (s.size() > 4) r.bad(r.key("rope.dimension_sections"), "has more than 4 entries");
        for (size_t i = 0; i < s.size(); ++i) hp.sections[i] = static_cast<int>(s[i]);
    }
}

}  // namespace

Qwen35HParams read_qwen35_hparams(const gguf::File& file, RequiredKeys required) {
    const Reader r{file, required};
    Qwen35HParams hp;
    hp.n_embd = r.positive("embedding_length");
    hp.block_count = r.positive("block_count", 4096);
    hp.n_nextn = file.get_int(r.key("nextn_predict_layers"), 0);
    if (hp.n_nextn < 0 || hp.n_nextn >= hp.block_count)
        r.bad(r.key("nextn_predict_layers"), "is " + std::to_string(hp.n_nextn) + ", must be 0 to block_count - 1");
    hp.n_layer = hp.block_count - hp.n_nextn;
    hp.n_ctx_train = r.positive_or("context_length", 4096);
    hp.n_head = r.positive("attention.head_count", 4096);
    hp.n_head_kv = r.positive("attention.head_count_kv", 4096);
    if (hp.n_head % hp.n_head_kv != 0)
        r.bad(r.key("attention.head_count_kv"), "does not divide the head count " + std::to_string(hp.n_head));
    hp.head_dim = r.positive("attention.key_length", 1024);
    if (r.positive("attention.value_length", 1024) != hp.head_dim)
        r.bad(r.key("attention.value_length"), "differs from attention.key_length");
    if (required == RequiredKeys::for_loading) read_norm_and_rope(r, hp);
    hp.n_expert = r.positive_for_loading("expert_count", 1 << 16);
    hp.n_expert_used = r.positive_for_loading("expert_used_count", 1 << 16);
    if (hp.n_expert_used > hp.n_expert)
        r.bad(r.key("expert_used_count"), "is larger than expert_count " + std::to_string(hp.n_expert));
    hp.n_ff_exp = r.positive_for_loading("expert_feed_forward_length");
    hp.n_ff_shexp = r.positive_for_loading("expert_shared_feed_forward_length");
    hp.conv_kernel = r.positive("ssm.conv_kernel", 64);
    hp.d_k = r.positive("ssm.state_size", 4096);
    hp.h_k = r.positive("ssm.group_count", 4096);
    hp.h_v = r.positive_for_loading("ssm.time_step_rank", 4096);
    hp.value_dim = r.positive("ssm.inner_size");
    if (hp.h_v > 0) {
        if (hp.value_dim % hp.h_v != 0 || hp.h_v % hp.h_k != 0)
            r.bad(r.key("ssm.inner_size"), "is not a multiple of ssm.time_step_rank, or the head counts do not nest");
        hp.d_v = hp.value_dim / hp.h_v;
    }

    // Layer pattern: attention.recurrent_layers (one bool per block) or full_attention_interval.
    hp.recurrent.assign(static_cast<size_t>(hp.block_count), false);
    if (const gguf::Value* flags = file.find(r.key("attention.recurrent_layers"))) {
        const std::vector<bool> f = r.read_as("attention.recurrent_layers", [&] { return flags->bool_array(); });
        if (static_cast<int64_t>(f.size()) != hp.block_count)
            r.bad(r.key("attention.recurrent_layers"), "has " + std::to_string(f.size()) +
                                                           " entries, expected block_count " +
                                                           std::to_string(hp.block_count));
        for (int64_t i = hp.n_layer; i < hp.block_count; ++i)
            if (f[static_cast<size_t>(i)])
                r.bad(r.key("attention.recurrent_layers"), "marks MTP block " + std::to_string(i) + " as recurrent");
        hp.recurrent = f;
    } else {
        const int64_t interval = file.get_int(r.key("full_attention_interval"), 4);
        if (interval < 1) r.bad(r.key("full_attention_interval"), "must be at least 1");
        for (int64_t i = 0; i < hp.n_layer; ++i) hp.recurrent[static_cast<size_t>(i)] = (i + 1) % interval != 0;
    }
    return hp;
}

}  // namespace ember::model
