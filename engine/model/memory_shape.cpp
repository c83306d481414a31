// SPDX-License-Identifier: MIT
// read_memory_shape: the architecture's own shape (through the registry), then what every architecture adds: the
// embedded DFlash draft's KV cache and the vocabulary.
#include "model/memory_shape.h"

#include "ember/dflash_file.h"
#include "model/architecture_registry.h"

namespace ember {

namespace {

uint64_t draft_kv_bytes_per_position(const model::DFlashInfo& draft) {
    return static_cast<uint64_t>(draft.n_layer) *
           model::attention_kv_bytes_per_position(draft.n_head_kv, draft.head_dim, draft.head_dim);
}

uint64_t embedded_draft_kv_bytes_per_position(const gguf::File& file, RequiredKeys required) {
    if (required == RequiredKeys::for_memory_shape) {
        if (!model::is_drafted(file)) return 0;
        return draft_kv_bytes_per_position(model::read_dflash_keys(file, model::DFlashKeys::as_found));
    }
    try {
        const std::optional<model::DFlashInfo> draft = model::find_dflash(file);
        return draft ? draft_kv_bytes_per_position(*draft) : 0;
    } catch (const Error&) {
        return 0;
    }
}

}  // namespace

std::optional<MemoryShape> read_memory_shape(const gguf::File& file, RequiredKeys required) {
    const model::ArchitectureEntry* entry = model::find_architecture(file.get_string("general.architecture", ""));
    if (!entry) return std::nullopt;
    MemoryShape shape = entry->memory_shape(file, std::string(entry->name), required);
    shape.draft_kv_bytes_per_position = embedded_draft_kv_bytes_per_position(file, required);
    if (const gguf::TensorInfo* embd = file.find_tensor("token_embd.weight")) shape.n_vocab = embd->shape[1];
    return shape;
}

}  // namespace ember
