// SPDX-License-Identifier: MIT
#include "cli_model.h"

#include <cstdio>
#include <unistd.h>

#include "cli_vision.h"

namespace ember::cli {

std::vector<OptionSpec> model_option_specs() {
    return {{"--model", "-m"},      {"--threads", "-t"},    {"--ctx", "-c"},
            {"--kv-type", ""},       {"--template", ""},     {"--backend", ""},
            {"--gpu-memory", ""},    {"--amd-backend", ""},  {"--experts-on-host", "", false},
            {"--speculation", ""},   {"--draft-file", ""},   {"--draft-length", ""}};
}

std::vector<OptionSpec> sampling_option_specs() {
    return {{"--temp", ""},           {"--top-k", ""},           {"--top-p", ""},
            {"--min-p", ""},          {"--repeat-penalty", ""},  {"--repeat-last-n", ""},
            {"--presence-penalty", ""}, {"--frequency-penalty", ""}, {"--seed", ""},
            {"--stop", ""}};
}

std::vector<OptionSpec> chat_switch_option_specs() {
    return {{"--no-think", "", false}, {"--reasoning-effort", ""}};
}

void chat_switches_from_args(const ParsedArgs& args, nlohmann::ordered_json& kwargs) {
    if (args.has("--no-think")) kwargs["enable_thinking"] = false;
    if (!args.has("--reasoning-effort")) return;
    const std::string effort = args.get("--reasoning-effort");
    if (effort != "low" && effort != "medium" && effort != "high")
        throw UsageError("--reasoning-effort must be low, medium or high, not '" + effort + "'");
    kwargs["reasoning_effort"] = effort;
}

std::vector<OptionSpec> join(std::vector<OptionSpec> a, const std::vector<OptionSpec>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

std::shared_ptr<LoadedModel> load_model_from_args(const ParsedArgs& args) {
    LoadOptions options;
    options.threads = static_cast<int>(args.get_int("--threads", 0));
    if (options.threads < 0) throw UsageError("--threads must be 0 (all) or more");
    if (args.has("--template")) options.chat_template_file = args.get("--template");
    options.backend = args.get("--backend", "auto");
    const SessionOptions session = session_options_from_args(args);
    options.context = session.n_ctx;
    options.kv_type = session.kv_type;
    if (args.has("--gpu-memory")) options.device_policy.gpu_memory_limit = parse_memory_size(args.get("--gpu-memory"));
    options.device_policy.amd_backend = args.get("--amd-backend", options.device_policy.amd_backend);
    if (options.device_policy.amd_backend != "vulkan" && options.device_policy.amd_backend != "hip")
        throw UsageError("--amd-backend must be vulkan or hip, got '" + options.device_policy.amd_backend + "'");
    options.device_policy.experts_on_host = args.has("--experts-on-host");
    options.speculation = parse_speculation_request(args.get("--speculation", "auto"));
    if (args.has("--draft-file")) options.draft_file = args.get("--draft-file");
    const VisionArgs vision = vision_from_args(args);
    options.mmproj = projector_for(args.require("--model"), vision);
    options.image_max_pixels = vision.max_pixels;
    const bool show = ::isatty(STDERR_FILENO);
    int last_percent = -1;
    if (show)
        options.progress = [&](double fraction) {
            const int percent = static_cast<int>(fraction * 100);
            if (percent != last_percent) {
                std::fprintf(stderr, "\rloading %3d%%", percent);
                last_percent = percent;
            }
            return true;
        };
    auto model = LoadedModel::load(args.require("--model"), options);
    if (show) std::fprintf(stderr, "\r\033[K");
    if (!model->device_choice().notice.empty()) std::fprintf(stderr, "%s\n", model->device_choice().notice.c_str());
    return model;
}

uint64_t parse_memory_size(const std::string& text) {
    size_t used = 0;
    double value = 0;
    try {
        value = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    const std::string unit = text.substr(used);
    double scale = 0;
    if (unit.empty() || unit == "B") scale = 1;
    else if (unit == "K" || unit == "KiB") scale = 1024.0;
    else if (unit == "M" || unit == "MiB") scale = 1024.0 * 1024;
    else if (unit == "G" || unit == "GiB") scale = 1024.0 * 1024 * 1024;
    if (used == 0 || scale == 0 || !(value > 0))
        throw UsageError("--gpu-memory must be a size such as 8G, 512M or 8589934592, got '" + text + "'");
    return static_cast<uint64_t>(value * scale);
}

std::string device_line(const LoadedModel& model) {
    const DeviceChoice& c = model.device_choice();
    return c.device + " (" + c.backend + ", " + std::string(placement_name(c.placement)) + "): " + c.reason;
}

nlohmann::ordered_json device_json(const DeviceChoice& c) {
    nlohmann::ordered_json out = {{"backend", c.backend},
                                  {"device", c.device},
                                  {"placement", std::string(placement_name(c.placement))},
                                  {"memory_budget_bytes", c.memory_budget},
                                  {"reason", c.reason}};
    if (!c.notice.empty()) out["notice"] = c.notice;
    return out;
}

SessionOptions session_options_from_args(const ParsedArgs& args) {
    SessionOptions options;
    options.n_ctx = args.get_int("--ctx", options.n_ctx);
    const std::string kv = args.get("--kv-type", "f16");
    if (kv == "f16") options.kv_type = KvCacheType::f16;
    else if (kv == "q8_0") options.kv_type = KvCacheType::q8_0;
    else if (kv == "f32") options.kv_type = KvCacheType::f32;
    else throw UsageError("--kv-type must be f16, q8_0 or f32, got '" + kv + "'");
    options.draft_length = static_cast<int>(args.get_int("--draft-length", 0));
    if (options.draft_length < 0) throw UsageError("--draft-length must be 0 (adaptive) or more");
    return options;
}

SamplingParams sampling_from_args(const ParsedArgs& args) {
    SamplingParams p;
    p.temperature = static_cast<float>(args.get_double("--temp", p.temperature));
    p.top_k = static_cast<int>(args.get_int("--top-k", p.top_k));
    p.top_p = static_cast<float>(args.get_double("--top-p", p.top_p));
    p.min_p = static_cast<float>(args.get_double("--min-p", p.min_p));
    p.repeat_penalty = static_cast<float>(args.get_double("--repeat-penalty", p.repeat_penalty));
    p.repeat_last_n = static_cast<int>(args.get_int("--repeat-last-n", p.repeat_last_n));
    p.presence_penalty = static_cast<float>(args.get_double("--presence-penalty", p.presence_penalty));
    p.frequency_penalty = static_cast<float>(args.get_double("--frequency-penalty", p.frequency_penalty));
    p.seed = static_cast<uint64_t>(args.get_int("--seed", 0));
    return p;
}

}  // namespace ember::cli
