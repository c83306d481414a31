// SPDX-License-Identifier: MIT
// load_model and supported_architectures, through the architecture registry (model/architecture_registry.h).
#include <vector>

#include "model/architecture_registry.h"

namespace ember {

std::span<const std::string_view> supported_architectures() {
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> out;
        for (const model::ArchitectureEntry& entry : model::architecture_registry()) out.push_back(entry.name);
        return out;
    }();
    return names;
}

std::unique_ptr<Model> load_model(const gguf::File& file, Backend& backend, const LoadProgress& progress) {
    const std::string arch(file.get_string("general.architecture"));
    if (const model::ArchitectureEntry* entry = model::find_architecture(arch))
        return entry->load(file, backend, progress);
    std::string list;
    for (std::string_view a : supported_architectures()) list += (list.empty() ? "" : ", ") + std::string(a);
    throw Error(file.name() + ": unsupported architecture '" + arch + "' (supported: " + list + ")");
}

}  // namespace ember
