// SPDX-License-Identifier: MIT
// Model facts from GGUF metadata and the tensor table; the memory shape is the engine's (read_memory_shape).
#include "model_facts.h"

#include <algorithm>
#include <map>

#include "ember/dflash_file.h"
#include "ember/gguf.h"

namespace ember::models {

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

    if (facts.drafted)
        facts.draft_block_size = static_cast<uint32_t>(
            std::clamp<int64_t>(model::read_dflash_keys(file, model::DFlashKeys::as_found).block_size, 0, 4096));
    facts.memory = read_memory_shape(file, RequiredKeys::for_memory_shape).value_or(MemoryShape{});
    return facts;
}

}  // namespace ember::models
