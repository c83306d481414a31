// SPDX-License-Identifier: MIT
#include "cli_model.h"

#include <cstdio>
#include <unistd.h>

namespace ember::cli {

std::vector<OptionSpec> model_option_specs() {
    return {{"--model", "-m"}, {"--threads", "-t"}, {"--ctx", "-c"},
            {"--kv-type", ""}, {"--template", ""}, {"--backend", ""},
            {"--speculation", ""}, {"--draft-file", ""}, {"--draft-length", ""}};
}

std::vector<OptionSpec> sampling_option_specs() {
    return {{"--temp", ""},           {"--top-k", ""},           {"--top-p", ""},
            {"--min-p", ""},          {"--repeat-penalty", ""},  {"--repeat-last-n", ""},
            {"--presence-penalty", ""}, {"--frequency-penalty", ""}, {"--seed", ""},
            {"--stop", ""}};
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
    options.backend = args.get("--backend", "cpu");
    options.speculation = args.get("--speculation", "auto");
    if (args.has("--draft-file")) options.draft_file = args.get("--draft-file");
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
    return model;
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
