// SPDX-License-Identifier: MIT
// What `ember-gguf inspect` says about a DFlash draft, embedded or standalone: its shape, and whether it passes
// the checks of ../specs/drafted-gguf.md §5-§6 (a standalone draft only against itself: there is no target).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember/gguf.h"
#include "ember/dflash_file.h"

namespace ember::cli {

struct DraftReport {
    std::string file;         // the file's name as opened
    bool standalone = false;  // general.architecture is dflash (or dflash-draft)
    model::DFlashInfo info;   // as read; fields the file lacks stay 0 / empty / -1
    std::string error;        // the one-line problem, empty when the draft is valid
    std::vector<std::string> warnings;
};

// nullopt when the file has no draft at all. Never throws.
std::optional<DraftReport> report_draft(const gguf::File& file, const gguf::Capabilities& caps);

// "2 layers, target_layers [1, 2], block size 8, mask token 266"
std::string describe_draft(const model::DFlashInfo& info);

// The error and warnings without the leading "<file>: " (the document names the file once).
nlohmann::ordered_json draft_json(const DraftReport& report);

}  // namespace ember::cli
