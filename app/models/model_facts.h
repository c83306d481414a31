// SPDX-License-Identifier: MIT
// What the model manager needs to know about a GGUF file, read from its metadata and tensor table: quant types,
// context length, capabilities, and the memory shape the fit estimate uses (the engine's read_memory_shape).
//
// Qt-free so that the fit estimate can be tested with plain numbers. It never reads tensor data and never loads a
// model; it only looks at what ember::gguf::File has already validated.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ember/model_info.h"

namespace ember::models {

struct ModelFacts {
    std::string architecture;  // general.architecture
    std::string name;          // general.name
    uint64_t file_bytes = 0;
    uint64_t weight_bytes = 0;    // every tensor, the draft and the MTP head included
    uint64_t draft_bytes = 0;     // tensors named dflash.*
    uint64_t context_length = 0;  // <arch>.context_length, 0 when absent
    // Bytes of weights per tensor type name ("q4_k", "q4_0_rocmfp4"), largest first.
    std::vector<std::pair<std::string, uint64_t>> quant_types;

    // Capabilities read from the file.
    bool mtp = false;                // an MTP (nextn) head with its tensors
    bool drafted = false;            // an embedded DFlash draft
    uint32_t draft_block_size = 0;   // dflash.block_size (16 when drafted and absent)
    bool vision_projector = false;   // clip.* keys: the file is an mmproj
    bool chat_template = false;      // tokenizer.chat_template present
    bool thinking_template = false;  // the embedded template opens a <think> block

    // Per sequence, from the keys the shape depends on; all zero for an architecture the engine does not run.
    MemoryShape memory;

    // The quant type holding most weight bytes, or "" for a file without tensors.
    std::string main_quant() const { return quant_types.empty() ? std::string() : quant_types.front().first; }
};

// Reads the facts from an opened (and therefore validated) file. Throws ember::Error naming the file and key
// when a key the memory shape needs is missing, has the wrong type or an impossible value.
ModelFacts read_model_facts(const ember::gguf::File& file);

// True when a Jinja chat template opens a reasoning block (<think>), as Qwen3-style thinking templates do.
bool template_has_thinking(std::string_view jinja);

}  // namespace ember::models
