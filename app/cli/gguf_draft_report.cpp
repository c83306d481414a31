// SPDX-License-Identifier: MIT
#include "gguf_draft_report.h"

#include <algorithm>

namespace ember::cli {

namespace {

// A standalone draft has no target: it is checked against the widest target it could fit (its own width, its
// largest tap, its own vocabulary), which still checks every tensor shape and the mask id.
model::DFlashInfo check_standalone(const gguf::File& file, const model::DFlashWarning& warn) {
    const model::DFlashInfo peek = model::read_dflash_keys(file, model::DFlashKeys::as_found);
    model::DFlashTarget self;
    self.n_embd = peek.n_embd;
    self.n_layer = peek.target_layers.empty()
                       ? 1
                       : std::max<int64_t>(1, *std::max_element(peek.target_layers.begin(), peek.target_layers.end()));
    if (const gguf::Value* tokens = file.find("tokenizer.ggml.tokens"))
        self.n_vocab = static_cast<int64_t>(tokens->size());
    else
        self.n_vocab = INT32_MAX;  // no vocabulary to check the mask id against
    return model::read_dflash(file, "", self, warn);
}

}  // namespace

std::optional<DraftReport> report_draft(const gguf::File& file, const gguf::Capabilities& caps) {
    DraftReport report;
    report.file = file.name();
    report.standalone = model::is_draft_architecture(caps.architecture);
    if (!report.standalone && !caps.has_dflash()) return std::nullopt;
    const model::DFlashWarning warn = [&](const std::string& w) { report.warnings.push_back(w); };
    try {
        if (report.standalone) {
            report.info = check_standalone(file, warn);
        } else if (std::optional<model::DFlashInfo> info = model::find_dflash(file, warn)) {
            report.info = std::move(*info);
        } else {
            report.error = file.name() + ": dflash.* tensors but dflash.embedded is false: not a drafted file";
        }
    } catch (const Error& e) {
        report.error = e.what();
    }
    if (!report.error.empty()) {
        try {
            report.info = model::read_dflash_keys(file, model::DFlashKeys::as_found);
        } catch (const Error&) {
            report.info = {};  // the error already names the bad key
        }
    }
    return report;
}

std::string describe_draft(const model::DFlashInfo& info) {
    std::string layers = "[";
    for (size_t i = 0; i < info.target_layers.size(); ++i)
        layers += (i ? ", " : "") + std::to_string(info.target_layers[i]);
    layers += "]";
    std::string out = std::to_string(info.n_layer) + " layers, target_layers " + layers + ", block size " +
                      std::to_string(info.block_size) + ", mask token " +
                      (info.mask_token >= 0 ? std::to_string(info.mask_token) : std::string("none"));
    if (info.sliding_window > 0) out += ", sliding window " + std::to_string(info.sliding_window);
    return out;
}

nlohmann::ordered_json draft_json(const DraftReport& report) {
    auto without_file = [&](const std::string& line) {
        const std::string prefix = report.file + ": ";
        return line.starts_with(prefix) ? line.substr(prefix.size()) : line;
    };
    const model::DFlashInfo& info = report.info;
    nlohmann::ordered_json doc = {
        {"standalone", report.standalone},
        {"valid", report.error.empty()},
        {"layers", info.n_layer},
        {"embedding_length", info.n_embd},
        {"head_count", info.n_head},
        {"head_count_kv", info.n_head_kv},
        {"head_dim", info.head_dim},
        {"feed_forward_length", info.n_ff},
        {"target_layers", info.target_layers},
        {"block_size", info.block_size},
        {"mask_token_id", info.mask_token >= 0 ? nlohmann::ordered_json(info.mask_token) : nlohmann::ordered_json()},
    };
    if (!report.error.empty()) doc["error"] = without_file(report.error);
    for (const std::string& w : report.warnings) doc["warnings"].push_back(without_file(w));
    return doc;
}

}  // namespace ember::cli
