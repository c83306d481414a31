// SPDX-License-Identifier: MIT
// The architecture registry: for each general.architecture Ember runs, what loads it and what reads its memory
// shape. load_model, read_memory_shape and supported_architectures all go through it.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "model/model.h"

namespace ember::model {

using ModelFactory = std::unique_ptr<Model> (*)(const gguf::File&, Backend&, const LoadProgress&);
// Reads the architecture's own hyperparameters (arch: general.architecture) into the shape of one sequence's
// memory, without the draft and the vocabulary, which read_memory_shape adds for every architecture.
using MemoryShapeReader = MemoryShape (*)(const gguf::File&, const std::string& arch, RequiredKeys);

struct ArchitectureEntry {
    std::string_view name;
    ModelFactory load;
    MemoryShapeReader memory_shape;
    // Sliding-window attention (gguf::read_sliding_window): 0 when the architecture has none (its sliding_window keys
    // are not read); else the period of its local layers when a file gives no pattern.
    int64_t sliding_window_period = 0;
};

std::span<const ArchitectureEntry> architecture_registry();
// The entry of `name`, or nullptr when Ember does not run it.
const ArchitectureEntry* find_architecture(std::string_view name);

}  // namespace ember::model
