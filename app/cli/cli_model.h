// SPDX-License-Identifier: MIT
// What the model-running commands share: the options that pick and load a model, and sampling options.
#pragma once

#include <memory>
#include <vector>

#include "cli_args.h"
#include "ember/runtime.h"

namespace ember::cli {

// -m/--model, --threads, --ctx, --kv-type, --template, --backend (cpu, vulkan, vulkan:N, vulkan:NAME),
// --speculation (auto, off, mtp, dflash), --draft-file (a standalone DFlash draft), --draft-length (0: adaptive)
std::vector<OptionSpec> model_option_specs();
// --temp, --top-k, --top-p, --min-p, --repeat-penalty, --repeat-last-n, --presence-penalty,
// --frequency-penalty, --seed, --stop
std::vector<OptionSpec> sampling_option_specs();
std::vector<OptionSpec> join(std::vector<OptionSpec> a, const std::vector<OptionSpec>& b);

// Loads the model named by -m, showing progress on stderr when it is a terminal.
std::shared_ptr<LoadedModel> load_model_from_args(const ParsedArgs& args);
SessionOptions session_options_from_args(const ParsedArgs& args);
SamplingParams sampling_from_args(const ParsedArgs& args);

}  // namespace ember::cli
