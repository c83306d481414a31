// SPDX-License-Identifier: MIT
#include "quantize_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "cpu/cpu_kernels.h"
#include "ember/quant.h"
#include "quantize_progress.h"

namespace ember::cli::quantize {

namespace {

using gguf::TensorInfo;

constexpr int64_t kWeightsPerBatch = int64_t{1} << 22;  // rows are converted in batches of about this many weights

struct Plan {
    const TensorInfo* tensor;
    Choice choice;
};

std::string name_of(TensorType t) { return std::string(gguf::traits(t).name); }

bool converts(const Plan& p) { return !p.choice.keep && p.choice.type != p.tensor->type; }

// Checks every row of every tensor whose type the quantization module knows, before any work is done.
void validate_input(const gguf::File& in, cpu::ThreadPool& pool) {
    for (const TensorInfo& t : in.tensors()) {
        if (!quant::can_dequantize(t.type)) continue;
        const int64_t cols = t.shape[0];
        const auto in_row = static_cast<size_t>(gguf::row_bytes(t.type, cols));
        const std::byte* data = in.tensor_data(t).data();
        pool.parallel_for(t.n_rows(), [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
                try {
                    quant::validate_row(t.type, data + static_cast<size_t>(r) * in_row, cols);
                } catch (const Error& e) {
                    throw Error(in.name() + ": tensor '" + std::string(t.name) + "' row " + std::to_string(r) + ": " +
                                e.what());
                }
            }
        });
    }
}

// Converts (or copies) one tensor into `out`.
void convert(const gguf::File& in, const Plan& p, std::span<std::byte> out, cpu::ThreadPool& pool, Progress& progress) {
    const TensorInfo& t = *p.tensor;
    const TensorType from = t.type;
    const TensorType to = p.choice.keep ? from : p.choice.type;
    const int64_t cols = t.shape[0];
    const int64_t rows = t.n_rows();
    const std::span<const std::byte> src = in.tensor_data(t);
    const auto in_row = static_cast<size_t>(gguf::row_bytes(from, cols));
    const auto out_row = static_cast<size_t>(gguf::row_bytes(to, cols));
    const bool convert_rows = from != to;

    const int64_t batch = std::max<int64_t>(1, kWeightsPerBatch / std::max<int64_t>(cols, 1));
    for (int64_t r0 = 0; r0 < rows; r0 += batch) {
        const int64_t r1 = std::min(rows, r0 + batch);
        pool.parallel_for(r1 - r0, [&](int64_t begin, int64_t end) {
            std::vector<float> buffer(convert_rows ? static_cast<size_t>(cols) : 0);
            for (int64_t r = r0 + begin; r < r0 + end; ++r) {
                const std::byte* s = src.data() + static_cast<size_t>(r) * in_row;
                std::byte* d = out.data() + static_cast<size_t>(r) * out_row;
                if (!convert_rows) {
                    std::memcpy(d, s, in_row);
                } else {
                    quant::dequantize_row(from, s, buffer.data(), cols);
                    quant::quantize_row(to, buffer.data(), d, cols);
                }
            }
        });
        progress.advance(static_cast<uint64_t>((r1 - r0) * cols));
    }
}

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
    cpu::ThreadPool pool(options.threads);
    validate_input(in, pool);
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
    for (const Plan& p : plans) {
        const TensorInfo& t = *p.tensor;
        const TensorType to = p.choice.keep ? t.type : p.choice.type;
        const std::vector<int64_t> shape(t.shape.begin(), t.shape.begin() + t.n_dims);
        writer.add_tensor(std::string(t.name), to, shape,
                          [&in, &p, &pool, &progress](std::span<std::byte> out) { convert(in, p, out, pool, progress); });
        TypeTotals& totals = by_type[name_of(to)];
        totals.tensors += 1;
        totals.bytes += gguf::row_bytes(to, t.shape[0]) * static_cast<uint64_t>(t.n_rows());
        totals.weights += static_cast<uint64_t>(t.n_elements());
        input.tensors += 1;
        input.bytes += t.n_bytes;
        input.weights += static_cast<uint64_t>(t.n_elements());
    }
    writer.write(options.output);
    progress.finish();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    print_summary(stdout, by_type, input, seconds);
}

}  // namespace ember::cli::quantize
