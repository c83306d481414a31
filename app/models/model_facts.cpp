// SPDX-License-Identifier: MIT
// Model facts from GGUF metadata. KV and recurrent-state sizes follow ../specs/qwen35moe.md §2 and §5.6 for the
// hybrid architectures (full attention every `full_attention_interval` layers, Gated DeltaNet elsewhere, MTP layers
// after the trunk) and plain per-layer attention for every other architecture.
#include "model_facts.h"

#include <algorithm>
#include <map>

#include "ember/gguf.h"

namespace ember::models {

namespace {

constexpr uint64_t kF16Bytes = 2;
constexpr uint64_t kF32Bytes = 4;
constexpr uint32_t kMaxLayers = 100000;  // a bound on block_count, so a corrupt value cannot drive a huge loop

struct ArchKeys {
    const gguf::File& file;
    std::string prefix;

    std::string key(std::string_view suffix) const { return prefix + std::string(suffix); }
    int64_t get(std::string_view suffix, int64_t fallback) const { return file.get_int(key(suffix), fallback); }

    // A per-layer count that may be stored as one integer or as an array with one value per layer.
    std::vector<int64_t> per_layer(std::string_view suffix, uint32_t n_layers, int64_t fallback) const {
        std::vector<int64_t> out(n_layers, fallback);
        const gguf::Value* v = file.find(key(suffix));
        if (!v) return out;
        if (v->type() == gguf::ValueType::ARRAY) {
            const std::vector<int64_t> values = v->int_array();
            for (uint32_t i = 0; i < n_layers && i < values.size(); ++i) out[i] = values[i];
        } else {
            std::fill(out.begin(), out.end(), v->as_int());
        }
        return out;
    }

    uint32_t checked_count(std::string_view suffix, int64_t fallback, int64_t max) const {
        const int64_t v = get(suffix, fallback);
        if (v < 0 || v > max)
            throw Error(file.name() + ": key '" + key(suffix) + "' is " + std::to_string(v) + ", expected 0.." +
                        std::to_string(max));
        return static_cast<uint32_t>(v);
    }
};

// Which layers are recurrent: attention.recurrent_layers when present, else the full_attention_interval rule
// (layer i of the trunk is recurrent iff (i + 1) mod interval != 0). MTP layers after the trunk are attention.
std::vector<bool> recurrent_layer_mask(const ArchKeys& keys, uint32_t n_trunk, uint32_t n_layers) {
    std::vector<bool> recurrent(n_layers, false);
    if (!keys.file.has(keys.key(".ssm.inner_size"))) return recurrent;
    if (const gguf::Value* v = keys.file.find(keys.key(".attention.recurrent_layers"));
        v && v->type() == gguf::ValueType::ARRAY && v->element_type() == gguf::ValueType::BOOL) {
        const std::vector<bool> values = v->bool_array();
        for (uint32_t i = 0; i < n_trunk && i < values.size(); ++i) recurrent[i] = values[i];
        return recurrent;
    }
    const int64_t interval = keys.get(".full_attention_interval", 0);
    for (uint32_t i = 0; i < n_trunk; ++i) recurrent[i] = interval <= 0 || (i + 1) % interval != 0;
    return recurrent;
}

void read_memory_shape(const gguf::File& file, ModelFacts& facts) {
    if (facts.architecture.empty()) return;
    const ArchKeys keys{file, facts.architecture};
    const uint32_t n_layers = keys.checked_count(".block_count", 0, kMaxLayers);
    const uint32_t n_mtp = std::min(keys.checked_count(".nextn_predict_layers", 0, kMaxLayers), n_layers);
    const uint32_t n_trunk = n_layers - n_mtp;
    const int64_t n_embd = keys.get(".embedding_length", 0);
    const std::vector<int64_t> heads = keys.per_layer(".attention.head_count", n_layers, 0);
    const std::vector<int64_t> kv_heads = keys.per_layer(".attention.head_count_kv", n_layers, -1);
    const std::vector<bool> recurrent = recurrent_layer_mask(keys, n_trunk, n_layers);
    const gguf::SlidingWindowLayout sliding = gguf::read_sliding_window(file, facts.architecture, n_layers);
    facts.sliding_window = sliding.window;

    for (uint32_t i = 0; i < n_layers; ++i) {
        if (recurrent[i]) {
            ++facts.recurrent_layers;
            continue;
        }
        const int64_t n_head = heads[i];
        const int64_t n_head_kv = kv_heads[i] < 0 ? n_head : kv_heads[i];
        if (n_head_kv <= 0) continue;  // a layer without attention (some architectures mark them with 0)
        const int64_t default_dim = n_head > 0 ? n_embd / n_head : 0;
        const int64_t k_dim = keys.get(".attention.key_length", default_dim);
        const int64_t v_dim = keys.get(".attention.value_length", default_dim);
        if (k_dim < 0 || v_dim < 0)
            throw Error(file.name() + ": negative attention key/value length in '" + facts.architecture + ".*'");
        ++facts.kv_layers;
        const uint64_t bytes = static_cast<uint64_t>(n_head_kv) * static_cast<uint64_t>(k_dim + v_dim) * kF16Bytes;
        facts.kv_bytes_per_position += bytes;
        if (i < sliding.local_layers.size() && sliding.local_layers[i]) facts.sliding_kv_bytes_per_position += bytes;
    }

    if (facts.recurrent_layers > 0) {
        const uint64_t conv_kernel = static_cast<uint64_t>(std::max<int64_t>(keys.get(".ssm.conv_kernel", 0), 1));
        const uint64_t state_size = static_cast<uint64_t>(std::max<int64_t>(keys.get(".ssm.state_size", 0), 0));
        const uint64_t groups = static_cast<uint64_t>(std::max<int64_t>(keys.get(".ssm.group_count", 0), 0));
        const uint64_t inner = static_cast<uint64_t>(std::max<int64_t>(keys.get(".ssm.inner_size", 0), 0));
        // conv state: (kernel - 1) previous inputs of the q, k and v channels; SSM state: state_size x inner.
        const uint64_t conv = (conv_kernel - 1) * (inner + 2 * groups * state_size);
        const uint64_t ssm = state_size * inner;
        facts.recurrent_state_bytes = facts.recurrent_layers * (conv + ssm) * kF32Bytes;
    }
}

void read_draft_shape(const gguf::File& file, ModelFacts& facts) {
    if (!facts.drafted) return;
    facts.draft_block_size = static_cast<uint32_t>(std::clamp<int64_t>(file.get_int("dflash.block_size", 16), 0, 4096));
    const int64_t layers = file.get_int("dflash.block_count", 0);
    const int64_t n_head = file.get_int("dflash.attention.head_count", 0);
    const int64_t n_head_kv = file.get_int("dflash.attention.head_count_kv", n_head);
    const int64_t n_embd = file.get_int("dflash.embedding_length", 0);
    const int64_t default_dim = n_head > 0 ? n_embd / n_head : 0;
    const int64_t k_dim = file.get_int("dflash.attention.key_length", default_dim);
    const int64_t v_dim = file.get_int("dflash.attention.value_length", default_dim);
    if (layers < 0 || layers > kMaxLayers || n_head_kv < 0 || k_dim < 0 || v_dim < 0)
        throw Error(file.name() + ": impossible DFlash draft shape in 'dflash.*' keys");
    facts.draft_kv_bytes_per_position = static_cast<uint64_t>(layers) * static_cast<uint64_t>(n_head_kv) *
                                        static_cast<uint64_t>(k_dim + v_dim) * kF16Bytes;
}

}  // namespace

bool template_has_thinking(std::string_view jinja) {
    return jinja.find("<think>") != std::string_view::npos;
}

ModelFacts read_model_facts(const gguf::File& file) {
    const gguf::Capabilities caps = gguf::describe(file);
    ModelFacts facts;
    facts.architecture = caps.architecture;
    facts.name = std::string(file.get_string("general.name", ""));
    facts.file_bytes = file.size();
    facts.mtp = caps.has_mtp();
    facts.drafted = caps.has_dflash();
    facts.vision_projector = caps.vision_projector;
    facts.chat_template = caps.has_chat_template;
    if (facts.chat_template)
        facts.thinking_template = template_has_thinking(file.get_string("tokenizer.chat_template"));
    if (!facts.architecture.empty())
        facts.context_length =
            static_cast<uint64_t>(std::max<int64_t>(file.get_int(facts.architecture + ".context_length", 0), 0));

    std::map<std::string, uint64_t> by_type;
    for (const gguf::TensorInfo& t : file.tensors()) {
        facts.weight_bytes += t.n_bytes;
        if (t.name.starts_with("dflash.")) facts.draft_bytes += t.n_bytes;
        by_type[std::string(gguf::traits(t.type).name)] += t.n_bytes;
    }
    facts.quant_types.assign(by_type.begin(), by_type.end());
    std::stable_sort(facts.quant_types.begin(), facts.quant_types.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });

    read_memory_shape(file, facts);
    read_draft_shape(file, facts);
    return facts;
}

}  // namespace ember::models
