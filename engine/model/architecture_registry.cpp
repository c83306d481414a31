// SPDX-License-Identifier: MIT
// The architecture registry's entries. Adding an architecture is one line here plus its own files.
#include "model/architecture_registry.h"

#include <array>

#include "model/llama_family.h"
#include "model/qwen35moe.h"

namespace ember::model {

namespace {

template <class ModelClass>
std::unique_ptr<Model> make_model(const gguf::File& file, Backend& backend, const LoadProgress& progress) {
    return std::make_unique<ModelClass>(file, backend, progress);
}

constexpr std::array kArchitectureEntries = {
    ArchitectureEntry{"llama", make_model<LlamaFamilyModel>, transformer_memory_shape},
    ArchitectureEntry{"qwen2", make_model<LlamaFamilyModel>, transformer_memory_shape},
    ArchitectureEntry{"qwen3", make_model<LlamaFamilyModel>, transformer_memory_shape},
    ArchitectureEntry{"qwen3moe", make_model<LlamaFamilyModel>, transformer_memory_shape},
    // Gemma3TextConfig's default: five local layers, then a global one.
    ArchitectureEntry{"gemma3", make_model<LlamaFamilyModel>, transformer_memory_shape, 6},
    // gpt-oss alternates from its first layer; its converter writes no pattern.
    ArchitectureEntry{"gpt-oss", make_model<LlamaFamilyModel>, transformer_memory_shape, 2},
    ArchitectureEntry{"qwen35moe", make_model<Qwen35MoeModel>, qwen35_memory_shape},
};

}  // namespace

std::span<const ArchitectureEntry> architecture_registry() { return kArchitectureEntries; }

const ArchitectureEntry* find_architecture(std::string_view name) {
    for (const ArchitectureEntry& entry : kArchitectureEntries)
        if (entry.name == name) return &entry;
    return nullptr;
}

}  // namespace ember::model
