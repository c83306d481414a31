// SPDX-License-Identifier: MIT
#define PCRE2_CODE_UNIT_WIDTH 8
#include "quantize_rules.h"

#include <pcre2.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace ember::cli::quantize {

namespace {

using TT = TensorType;

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }


bool attention_v_branch(Category c) {
    return c == Category::attention_v || c == Category::attention_qkv || c == Category::attention_kv_b;
}

// The preset rules of §6.3-6.4 (and the llama.cpp-like Q4_0, Q8_0, Q4_K_M mixes).
TensorType preset_type(const Preset& p, Category c, int64_t layer, const ModelFacts& f) {
    const TT dual = TT::Q4_0_ROCMFP4, fast = TT::Q4_0_ROCMFP4_FAST;
    switch (p.id) {
        case PresetId::rocmfp4:
            if (c == Category::output) return TT::Q6_K;
            if (attention_v_branch(c) || c == Category::attention_output) return TT::Q5_K;
            if (c == Category::ffn_down && layer >= 0) return 3 * layer < 2 * f.n_layer ? TT::Q6_K : TT::Q5_K;
            if (c == Category::ffn_gate && layer >= 0 && use_more_bits(layer, f.n_layer)) return TT::Q5_K;
            return dual;
        case PresetId::rocmfp4_lean: return c == Category::token_embd ? TT::Q5_K : dual;
        case PresetId::rocmfp4_coherent: return c == Category::token_embd ? TT::Q6_K : dual;
        case PresetId::rocmfp4_fast: return fast;
        case PresetId::rocmfp4_fast_coherent: return c == Category::token_embd ? TT::Q6_K : fast;
        case PresetId::rocmfp4_strix:
        case PresetId::rocmfp4_strix_lean:
            if (c == Category::token_embd) return p.id == PresetId::rocmfp4_strix ? TT::Q6_K : TT::Q5_K;
            if (c == Category::attention_k || attention_v_branch(c)) return dual;
            return fast;
        case PresetId::q4_0: return c == Category::output ? TT::Q6_K : TT::Q4_0;
        case PresetId::q8_0: return TT::Q8_0;
        case PresetId::q4_k_m:
            if (c == Category::output) return TT::Q6_K;
            if ((attention_v_branch(c) || c == Category::ffn_down) && layer >= 0 && use_more_bits(layer, f.n_layer))
                return TT::Q6_K;
            return TT::Q4_K;
    }
    return p.default_type;
}

}  // namespace

const std::vector<Preset>& presets() {
    static const std::vector<Preset> list = {
        {PresetId::rocmfp4, "Q4_0_ROCMFP4", 100, TT::Q4_0_ROCMFP4},
        {PresetId::rocmfp4_lean, "Q4_0_ROCMFP4_LEAN", 101, TT::Q4_0_ROCMFP4},
        {PresetId::rocmfp4_coherent, "Q4_0_ROCMFP4_COHERENT", 102, TT::Q4_0_ROCMFP4},
        {PresetId::rocmfp4_fast, "Q4_0_ROCMFP4_FAST", 103, TT::Q4_0_ROCMFP4_FAST},
        {PresetId::rocmfp4_fast_coherent, "Q4_0_ROCMFP4_FAST_COHERENT", 104, TT::Q4_0_ROCMFP4_FAST},
        {PresetId::rocmfp4_strix, "Q4_0_ROCMFP4_STRIX", 105, TT::Q4_0_ROCMFP4_FAST},
        {PresetId::rocmfp4_strix_lean, "Q4_0_ROCMFP4_STRIX_LEAN", 106, TT::Q4_0_ROCMFP4_FAST},
        {PresetId::q4_0, "Q4_0", 2, TT::Q4_0},
        {PresetId::q8_0, "Q8_0", 7, TT::Q8_0},
        {PresetId::q4_k_m, "Q4_K_M", 15, TT::Q4_K},
    };
    return list;
}

const Preset* find_preset(std::string_view name) {
    for (const Preset& p : presets())
        if (iequals(p.name, name)) return &p;
    return nullptr;
}

uint32_t file_type_of(TensorType type) {
    switch (type) {
        case TT::F32: return 0;
        case TT::F16: return 1;
        case TT::Q4_0: return 2;
        case TT::Q4_1: return 3;
        case TT::Q8_0: return 7;
        case TT::Q5_0: return 8;
        case TT::Q5_1: return 9;
        case TT::Q2_K: return 10;
        case TT::Q3_K: return 11;  // Q3_K_S: mostly Q3_K
        case TT::Q4_K: return 14;  // Q4_K_S
        case TT::Q5_K: return 16;  // Q5_K_S
        case TT::Q6_K: return 18;
        case TT::BF16: return 32;
        case TT::MXFP4: return 38;
        case TT::Q4_0_ROCMFP4: return 100;
        case TT::Q4_0_ROCMFP4_FAST: return 103;
        case TT::Q6_0_ROCMFPX: return 110;
        case TT::Q8_0_ROCMFPX: return 111;
        case TT::Q3_0_ROCMFPX: return 112;
        default: return 1024;  // llama.cpp's "guessed"
    }
}

// --- NamePattern ---------------------------------------------------------------------------------------------

struct NamePattern::Compiled {
    pcre2_code* code = nullptr;
    pcre2_match_data* match = nullptr;
    ~Compiled() {
        pcre2_match_data_free(match);
        pcre2_code_free(code);
    }
};

NamePattern::NamePattern(const std::string& pattern) : compiled_(std::make_unique<Compiled>()), text_(pattern) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    compiled_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF, &error,
                                    &offset, nullptr);
    if (!compiled_->code) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(error, message, sizeof message);
        throw Error("bad --tensor-type pattern '" + pattern + "' at offset " + std::to_string(offset) + ": " +
                    reinterpret_cast<const char*>(message));
    }
    compiled_->match = pcre2_match_data_create_from_pattern(compiled_->code, nullptr);
}

NamePattern::~NamePattern() = default;
NamePattern::NamePattern(NamePattern&&) noexcept = default;
NamePattern& NamePattern::operator=(NamePattern&&) noexcept = default;

bool NamePattern::matches(std::string_view name) const {
    return pcre2_match(compiled_->code, reinterpret_cast<PCRE2_SPTR>(name.data()), name.size(), 0, 0,
                       compiled_->match, nullptr) >= 0;
}

// --- Tensor rules --------------------------------------------------------------------------------------------

bool is_quantizable(const gguf::TensorInfo& t) {
    const std::string_view name = t.name;
    if (t.n_dims < 2) return false;
    if (contains(name, "_norm.weight")) return false;
    if (contains(name, "ffn_gate_inp.weight")) return false;  // the MoE router
    if (contains(name, "ssm_conv1d")) return false;
    return name.ends_with("weight");
}

Category categorize(std::string_view name) {
    if (name == "output.weight") return Category::output;
    if (name == "token_embd.weight") return Category::token_embd;
    if (contains(name, "attn_qkv.weight")) return Category::attention_qkv;
    if (contains(name, "attn_kv_b.weight")) return Category::attention_kv_b;
    if (contains(name, "attn_v.weight")) return Category::attention_v;
    if (contains(name, "attn_k.weight")) return Category::attention_k;
    if (contains(name, "attn_q.weight")) return Category::attention_q;
    if (contains(name, "attn_output.weight")) return Category::attention_output;
    if (contains(name, "ffn_up")) return Category::ffn_up;
    if (contains(name, "ffn_gate")) return Category::ffn_gate;
    if (contains(name, "ffn_down")) return Category::ffn_down;
    return Category::other;
}

int64_t layer_index(std::string_view name) {
    if (!name.starts_with("blk.")) return -1;
    int64_t layer = -1;
    const char* begin = name.data() + 4;
    const auto [end, ec] = std::from_chars(begin, name.data() + name.size(), layer);
    if (ec != std::errc() || end == begin || end == name.data() + name.size() || *end != '.') return -1;
    return layer;
}

bool use_more_bits(int64_t layer, int64_t n_layer) {
    return layer < n_layer / 8 || layer >= 7 * n_layer / 8 || (layer - n_layer / 8) % 3 == 2;
}

ModelFacts model_facts(const gguf::File& file) {
    ModelFacts f;
    const std::string arch(file.get_string("general.architecture", ""));
    int64_t max_layer = -1;
    for (const gguf::TensorInfo& t : file.tensors()) max_layer = std::max(max_layer, layer_index(t.name));
    f.n_layer = arch.empty() ? max_layer + 1 : file.get_int(arch + ".block_count", max_layer + 1);
    f.n_expert = arch.empty() ? 0 : file.get_int(arch + ".expert_count", 0);
    f.tied_embeddings = file.find_tensor("output.weight") == nullptr;
    return f;
}

Choice choose_type(const gguf::TensorInfo& t, const Rules& rules, const ModelFacts& facts) {
    if (!is_quantizable(t)) return {true, t.type, false};
    const int64_t row = t.shape[0];
    Category c = categorize(t.name);

    // 1. Explicit types for the embeddings and the output head: exactly as asked, no fallback.
    std::optional<TensorType> exact;
    if (c == Category::token_embd) exact = rules.token_embedding_type;
    if (c == Category::output) exact = rules.output_tensor_type;
    if (exact) {
        const auto& traits = gguf::traits(*exact);
        if (row % traits.block_size != 0)
            throw Error("tensor '" + std::string(t.name) + "': row length " + std::to_string(row) +
                        " is not a multiple of the " + std::string(traits.name) + " block size " +
                        std::to_string(traits.block_size));
        return {false, *exact, false};
    }

    // 2. --tensor-type overrides, 3. the preset (or the plain type).
    std::optional<TensorType> type;
    for (const TypeOverride& o : rules.tensor_types)
        if (o.pattern.matches(t.name)) {
            type = o.type;
            break;
        }
    if (!type) {
        if (!rules.preset) {
            type = rules.plain_type;
        } else if (rules.pure) {
            type = rules.preset->default_type;
        } else {
            // Tied embeddings: token_embd is also the output head and takes the output rule (llama.cpp), except
            // under STRIX/STRIX_LEAN whose table gives it Q6_K/Q5_K (spec §6.3).
            const bool strix = rules.preset->id == PresetId::rocmfp4_strix || rules.preset->id == PresetId::rocmfp4_strix_lean;
            if (c == Category::token_embd && facts.tied_embeddings && !strix) c = Category::output;
            type = preset_type(*rules.preset, c, layer_index(t.name), facts);
            // The attention-V branch of a model with exactly 8 experts is forced to Q8_0, under every preset (§6.3).
            if (attention_v_branch(c) && facts.n_expert == 8) type = TensorType::Q8_0;
        }
    }

    // 4. Shape fallback.
    if (row % gguf::traits(*type).block_size != 0) {
        const TensorType fallback = row % 32 == 0 ? TensorType::Q4_0 : TensorType::F16;
        return {false, fallback, true};
    }
    return {false, *type, false};
}

}  // namespace ember::cli::quantize
