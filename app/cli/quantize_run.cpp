// SPDX-License-Identifier: MIT
// ember-quantize's run: each tensor's type from the rules, the plan checked, the engine's row check and conversion, the summary.
#include "quantize_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <vector>

#include "ember/quantize.h"
#include "quantize_progress.h"

namespace ember::cli::quantize {

namespace {

using gguf::TensorInfo;

struct Plan {
    const TensorInfo* tensor;
    Choice choice;
};

std::string name_of(TensorType t) { return std::string(gguf::traits(t).name); }

bool converts(const Plan& p) { return !p.choice.keep && p.choice.type != p.tensor->type; }

void check_plans(const gguf::File& in, const std::vector<Plan>& plans) {
    size_t quantizable = 0;
    for (const Plan& p : plans) {
        if (p.choice.keep) continue;
        ++quantizable;
        if (converts(p) && !quant::can_dequantize(p.tensor->type))
            throw Error(in.name() + ": tensor '" + std::string(p.tensor->name) + "' is " + name_of(p.tensor->type) +
                        ", which Ember cannot dequantize to convert it to " + name_of(p.choice.type));
        if (converts(p) && !quant::can_quantize(p.choice.type))
            throw Error("no quantizer for " + name_of(p.choice.type) + " (tensor '" + std::string(p.tensor->name) + "')");
    }
    if (quantizable == 0)
        throw Error(in.name() + ": no quantizable tensors (all " + std::to_string(plans.size()) +
                    " are 1-D, norms, the router, ssm_conv1d or not named *weight)");
}

// One line naming the quantized source types that get dequantized and quantized again.
void warn_requantization(const gguf::File& in, const std::vector<Plan>& plans) {
    std::map<std::string, int> count;
    for (const Plan& p : plans)
        if (converts(p) && gguf::traits(p.tensor->type).quantized) ++count[name_of(p.tensor->type)];
    if (count.empty()) return;
    std::string list;
    for (const auto& [name, n] : count) list += (list.empty() ? "" : ", ") + name + " x" + std::to_string(n);
    std::fprintf(stderr, "warning: %s: quantized tensors (%s) are dequantized and quantized again, which adds error\n",
                 in.name().c_str(), list.c_str());
}

}  // namespace

void run(const RunOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    const gguf::File in = gguf::File::open(options.input);
    const ModelFacts facts = model_facts(in);

    std::vector<Plan> plans;
    plans.reserve(in.tensors().size());
    for (const TensorInfo& t : in.tensors()) plans.push_back({&t, choose_type(t, options.rules, facts)});
    check_plans(in, plans);
    quant::validate_file_rows(in, options.threads);
    warn_requantization(in, plans);

    gguf::Writer writer(in.alignment());
    for (const gguf::KeyValue& kv : in.metadata()) writer.set(std::string(kv.key), gguf::to_owned(kv.value));
    const uint32_t file_type =
        options.rules.preset ? options.rules.preset->file_type : file_type_of(options.rules.plain_type);
    writer.set("general.file_type", file_type);
    if (!writer.has("general.quantization_version")) writer.set("general.quantization_version", uint32_t{2});

    uint64_t total_weights = 0;
    for (const Plan& p : plans) total_weights += static_cast<uint64_t>(p.tensor->n_elements());
    Progress progress(total_weights, stderr);

    std::map<std::string, TypeTotals> by_type;
    TypeTotals input;
    std::vector<quant::TensorConversion> conversions;
    for (const Plan& p : plans) {
        const TensorInfo& t = *p.tensor;
        const TensorType to = p.choice.keep ? t.type : p.choice.type;
        conversions.push_back({&t, to});
        TypeTotals& totals = by_type[name_of(to)];
        totals.tensors += 1;
        totals.bytes += gguf::row_bytes(to, t.shape[0]) * static_cast<uint64_t>(t.n_rows());
        totals.weights += static_cast<uint64_t>(t.n_elements());
        input.tensors += 1;
        input.bytes += t.n_bytes;
        input.weights += static_cast<uint64_t>(t.n_elements());
    }
    quant::add_converted_tensors(in, conversions, options.threads,
                                 [&progress](uint64_t weights) { progress.advance(weights); }, writer);
    writer.write(options.output);
    progress.finish();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    print_summary(stdout, by_type, input, seconds);
}

}  // namespace ember::cli::quantize
