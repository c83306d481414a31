// SPDX-License-Identifier: MIT
// What the model-running commands share: the options that pick and load a model, and sampling options.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "ember/runtime.h"

namespace ember::cli {

// -m/--model, --threads, --ctx, --kv-type, --template, --backend (auto, cpu, vulkan, vulkan:N, vulkan:NAME, cuda,
// hip), --gpu-memory (use at most this much of the GPU, e.g. 8G), --amd-backend (vulkan or hip for an AMD GPU both
// reach), --experts-on-host (the experts stay in host memory and run on the CPU), --speculation (auto, off, mtp,
// dflash), --draft-file (a standalone DFlash draft), --draft-length (0: adaptive)
std::vector<OptionSpec> model_option_specs();
// --temp, --top-k, --top-p, --min-p, --repeat-penalty, --repeat-last-n, --presence-penalty,
// --frequency-penalty, --seed, --stop
std::vector<OptionSpec> sampling_option_specs();
// --no-think (enable_thinking=false), --reasoning-effort low|medium|high (for templates that read reasoning_effort:
// gpt-oss)
std::vector<OptionSpec> chat_switch_option_specs();
std::vector<OptionSpec> join(std::vector<OptionSpec> a, const std::vector<OptionSpec>& b);

// Loads the model named by -m with its vision projector (cli_vision.h: projector_for), showing progress on stderr when
// it is a terminal, and the device choice's notice (the model could not go wholly on the GPU) when there is one.
std::shared_ptr<LoadedModel> load_model_from_args(const ParsedArgs& args);
// "8G", "512M", "8589934592" -> bytes (K, M, G are powers of 1024).
uint64_t parse_memory_size(const std::string& text);
// "NVIDIA H200 (cuda:0, gpu): NVIDIA H200 (discrete GPU, 139.7 GiB usable): the model needs 19.6 GiB"
std::string device_line(const LoadedModel& model);
nlohmann::ordered_json device_json(const DeviceChoice& choice);
SessionOptions session_options_from_args(const ParsedArgs& args);
SamplingParams sampling_from_args(const ParsedArgs& args);
// The template kwargs chat_switch_option_specs() ask for, written into `kwargs`.
void chat_switches_from_args(const ParsedArgs& args, nlohmann::ordered_json& kwargs);

}  // namespace ember::cli
