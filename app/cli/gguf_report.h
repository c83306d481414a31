// SPDX-License-Identifier: MIT
// What `ember-gguf inspect` prints: the whole container as JSON, or as a readable report.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>

#include "ember/gguf.h"

namespace ember::cli {

// max_array: arrays longer than this are cut to their first max_array items plus a count (0 = never cut).
nlohmann::ordered_json gguf_to_json(const gguf::File& file, uint64_t max_array = 0);
void print_gguf_report(const gguf::File& file, std::ostream& out);

}  // namespace ember::cli
