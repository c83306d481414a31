// SPDX-License-Identifier: MIT
#include <array>

#include "ember/model.h"
#include "model/llama_family.h"
#include "model/qwen35moe.h"

namespace ember {

namespace {
constexpr std::array<std::string_view, 4> kArchitectures = {"llama", "qwen2", "qwen3", "qwen35moe"};
}

std::span<const std::string_view> supported_architectures() { return kArchitectures; }

std::unique_ptr<Model> load_model(const gguf::File& file, Backend& backend, const LoadProgress& progress) {
    const std::string arch(file.get_string("general.architecture"));
    if (arch == "llama" || arch == "qwen2" || arch == "qwen3")
        return std::make_unique<model::LlamaFamilyModel>(file, backend, progress);
    if (arch == "qwen35moe") return std::make_unique<model::Qwen35MoeModel>(file, backend, progress);
    std::string list;
    for (std::string_view a : kArchitectures) list += (list.empty() ? "" : ", ") + std::string(a);
    throw Error(file.name() + ": unsupported architecture '" + arch + "' (supported: " + list + ")");
}

}  // namespace ember
