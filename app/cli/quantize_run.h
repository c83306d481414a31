// SPDX-License-Identifier: MIT
// One ember-quantize run: read IN, choose each tensor's type, validate every input row (before any work), convert
// row by row on a thread pool, write OUT with the metadata copied and general.file_type set, report progress and a summary.
#pragma once

#include <filesystem>

#include "quantize_rules.h"

namespace ember::cli::quantize {

struct RunOptions {
    std::filesystem::path input;
    std::filesystem::path output;
    Rules rules;
    int threads = 1;
};

// Throws ember::Error with a one-line message on any problem; OUT is not created then.
void run(const RunOptions& options);

}  // namespace ember::cli::quantize
