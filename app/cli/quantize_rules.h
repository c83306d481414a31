// SPDX-License-Identifier: MIT
// ember-quantize's choice of an output type per tensor (../shared/specs/rocmfp4.md §6): which tensors are never
// quantized, the name categories, the presets, the overrides and the shape fallback. Pure logic, no I/O.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ember/gguf.h"

namespace ember::cli::quantize {

using gguf::TensorType;

enum class Category {
    output, token_embd, attention_qkv, attention_kv_b, attention_v, attention_k, attention_q, attention_output,
    ffn_up, ffn_gate, ffn_down, other,
};

enum class PresetId {
    rocmfp4, rocmfp4_lean, rocmfp4_coherent, rocmfp4_fast, rocmfp4_fast_coherent, rocmfp4_strix,
    rocmfp4_strix_lean, q4_0, q8_0, q4_k_m,
};

struct Preset {
    PresetId id;
    std::string_view name;     // as typed on the command line (case-insensitive)
    uint32_t file_type;        // general.file_type
    TensorType default_type;   // what --pure gives every tensor
};

const std::vector<Preset>& presets();
const Preset* find_preset(std::string_view name);
// general.file_type for a plain TYPE run (llama.cpp's ftype numbering; ROCmFPX ids from the spec §1.1).
uint32_t file_type_of(TensorType type);

// A compiled --tensor-type pattern (PCRE2), matched anywhere in the tensor name.
class NamePattern {
public:
    explicit NamePattern(const std::string& pattern);  // throws ember::Error on a bad pattern
    ~NamePattern();
    NamePattern(NamePattern&&) noexcept;
    NamePattern& operator=(NamePattern&&) noexcept;
    bool matches(std::string_view name) const;
    const std::string& text() const { return text_; }

private:
    struct Compiled;
    std::unique_ptr<Compiled> compiled_;
    std::string text_;
};

struct TypeOverride {
    NamePattern pattern;
    TensorType type;
};

struct Rules {
    const Preset* preset = nullptr;   // or a plain type:
    TensorType plain_type = TensorType::F16;
    bool pure = false;                // every tensor gets the preset's default type
    std::optional<TensorType> token_embedding_type;
    std::optional<TensorType> output_tensor_type;
    std::vector<TypeOverride> tensor_types;  // first match wins
};

struct ModelFacts {
    int64_t n_layer = 0;       // <arch>.block_count, else the largest blk index + 1
    int64_t n_expert = 0;      // <arch>.expert_count, 0 when absent
    bool tied_embeddings = false;  // no output.weight: token_embd is also the output head
};

ModelFacts model_facts(const gguf::File& file);

// §6.1: false for 1-D tensors, norms, the router, ssm_conv1d and names not ending in "weight".
bool is_quantizable(const gguf::TensorInfo& t);
Category categorize(std::string_view name);
int64_t layer_index(std::string_view name);  // N of "blk.N.", or -1
bool use_more_bits(int64_t layer, int64_t n_layer);

struct Choice {
    bool keep = false;        // not quantized: the source type and bytes are kept
    TensorType type = TensorType::F32;
    bool fell_back = false;   // the shape fallback changed the type
};

// The output type of one tensor. Throws ember::Error when an explicit --token-embedding-type/--output-tensor-type
// cannot hold the tensor's row length.
Choice choose_type(const gguf::TensorInfo& t, const Rules& rules, const ModelFacts& facts);

}  // namespace ember::cli::quantize
