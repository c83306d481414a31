// SPDX-License-Identifier: MIT
// The architecture registry: each general.architecture Ember runs, with the class that loads it. Adding an
// architecture is one line here.
#include <array>

#include "model/model.h"
#include "model/llama_family.h"
#include "model/qwen35moe.h"

namespace ember {

namespace {

using ModelFactory = std::unique_ptr<Model> (*)(const gguf::File&, Backend&, const LoadProgress&);

template <class ModelClass>
std::unique_ptr<Model> make_model(const gguf::File& file, Backend& backend, const LoadProgress& progress) {
    return std::make_unique<ModelClass>(file, backend, progress);
}

struct Architecture {
    std::string_view name;
    ModelFactory load;
};

constexpr std::array kRegistry = {
    Architecture{"llama", make_model<model::LlamaFamilyModel>},
    Architecture{"qwen2", make_model<model::LlamaFamilyModel>},
    Architecture{"qwen3", make_model<model::LlamaFamilyModel>},
    Architecture{"qwen3moe", make_model<model::LlamaFamilyModel>},
    Architecture{"gemma3", make_model<model::LlamaFamilyModel>},
    Architecture{"gpt-oss", make_model<model::LlamaFamilyModel>},
    Architecture{"qwen35moe", make_model<model::Qwen35MoeModel>},
};

constexpr std::array<std::string_view, kRegistry.size()> registry_names() {
    std::array<std::string_view, kRegistry.size()> names{};
    for (size_t i = 0; i < kRegistry.size(); ++i) names[i] = kRegistry[i].name;
    return names;
}

constexpr auto kArchitectureNames = registry_names();

}  // namespace

std::span<const std::string_view> supported_architectures() { return kArchitectureNames; }

std::unique_ptr<Model> load_model(const gguf::File& file, Backend& backend, const LoadProgress& progress) {
    const std::string arch(file.get_string("general.architecture"));
    for (const Architecture& a : kRegistry)
        if (a.name == arch) return a.load(file, backend, progress);
    std::string list;
    for (std::string_view a : kArchitectureNames) list += (list.empty() ? "" : ", ") + std::string(a);
    throw Error(file.name() + ": unsupported architecture '" + arch + "' (supported: " + list + ")");
}

}  // namespace ember
