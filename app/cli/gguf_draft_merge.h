// SPDX-License-Identifier: MIT
// `ember-gguf merge-draft` and `split-draft` (../specs/drafted-gguf.md §7): a target and a standalone DFlash draft
// into one drafted file and back. Tensor data is copied from the input mappings straight into the output file
// (never a whole tensor in memory), written to a temporary file and renamed into place.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ember/dflash_file.h"

namespace ember::cli {

struct DraftWriteSummary {
    model::DFlashInfo draft;
    size_t target_tensors = 0;
    size_t draft_tensors = 0;
};

// §7.1. A target that already carries a draft is refused unless replace is set (its draft is then dropped).
DraftWriteSummary merge_draft(const std::filesystem::path& target, const std::filesystem::path& draft,
                              const std::filesystem::path& out, bool replace, const model::DFlashWarning& warn = {});

// §7.2. Writes the standalone draft and, when target_out is given, the bare target.
DraftWriteSummary split_draft(const std::filesystem::path& drafted, const std::filesystem::path& draft_out,
                              const std::optional<std::filesystem::path>& target_out,
                              const model::DFlashWarning& warn = {});

// The commands: args are the words after the command name. Exit codes: 0 done, 1 refused (one line on stderr),
// 2 usage error.
int merge_draft_command(const std::vector<std::string>& args);
int split_draft_command(const std::vector<std::string>& args);

}  // namespace ember::cli
