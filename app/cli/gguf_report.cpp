// SPDX-License-Identifier: MIT
#include "gguf_report.h"

#include "ember/error.h"
#include "ember/vision.h"

#include "byte_size_text.h"
#include "gguf_draft_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "ember/tokenizer.h"

namespace ember::cli {

namespace {

// One line of a projector's facts (vision.h read_projector_info), or why Ember cannot use it.
std::string projector_facts(const gguf::File& file) {
    try {
        const vision::ProjectorInfo p = vision::read_projector_info(file, file.name());
        return p.projector_type + ": blocks " + std::to_string(p.block_count) + ", width " + std::to_string(p.width) +
               ", heads " + std::to_string(p.heads) + ", feed-forward " + std::to_string(p.feed_forward) + ", patch " +
               std::to_string(p.patch_size) + ", merge " + std::to_string(p.merge) + ", projection_dim " +
               std::to_string(p.projection_dim) + ", position grid " + std::to_string(p.position_grid) + "x" +
               std::to_string(p.position_grid) + ", pixels " + std::to_string(p.limits.min_pixels) + "-" +
               std::to_string(p.limits.max_pixels) +
               (p.limits_from_keys ? " (from its keys)" : " (Hugging Face defaults)") +
               (p.weight_type.empty() ? "" : ", weights " + p.weight_type);
    } catch (const Error& e) {
        // The report is about this file already: drop the path the reader put in front, so two copies of
        // one file report identically.
        std::string why = e.what();
        const std::string prefix = file.name() + ": ";
        if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
        return "not usable by Ember: " + why;
    }
}

}  // namespace

namespace {

using nlohmann::ordered_json;
using gguf::Value;
using gguf::ValueType;

ordered_json number_json(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
    return v;
}

ordered_json value_json(const Value& v, uint64_t max_array) {
    switch (v.type()) {
        case ValueType::BOOL: return v.as_bool();
        case ValueType::STRING: return std::string(v.as_string());
        case ValueType::F32: case ValueType::F64: return number_json(v.as_float());
        case ValueType::U64: {
            uint64_t u;
            std::memcpy(&u, v.raw().data(), sizeof u);
            return u;
        }
        case ValueType::ARRAY: {
            ordered_json items = ordered_json::array();
            const uint64_t n = max_array ? std::min(v.size(), max_array) : v.size();
            for (uint64_t i = 0; i < n; ++i) items.push_back(value_json(v.item(i), max_array));
            if (n < v.size()) items.push_back("... " + std::to_string(v.size()) + " items");
            return items;
        }
        default: return v.as_int();
    }
}

struct TypeTotal {
    uint64_t tensors = 0;
    uint64_t bytes = 0;
    uint64_t elements = 0;
};

std::map<std::string, TypeTotal> totals_by_type(const gguf::File& file) {
    std::map<std::string, TypeTotal> totals;
    for (const gguf::TensorInfo& t : file.tensors()) {
        TypeTotal& total = totals[std::string(gguf::traits(t.type).name)];
        total.tensors += 1;
        total.bytes += t.n_bytes;
        total.elements += static_cast<uint64_t>(t.n_elements());
    }
    return totals;
}

// Text from the file as it may reach a terminal: C0 and C1 control characters, DEL and bytes that are not
// UTF-8 are escaped, so that no escape sequence in a key, value or tensor name acts on the terminal.
std::string escaped(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    char buf[12];
    for (size_t i = 0; i < s.size();) {
        const auto b = static_cast<unsigned char>(s[i]);
        if (b == '\n' || b == '\t' || b == '\r') {
            out += b == '\n' ? "\\n" : b == '\t' ? "\\t" : "\\r";
            ++i;
            continue;
        }
        if (b < 0x20 || b == 0x7F) {
            std::snprintf(buf, sizeof buf, "\\x%02x", b);
            out += buf;
            ++i;
            continue;
        }
        if (b < 0x80) {
            out += static_cast<char>(b);
            ++i;
            continue;
        }
        const size_t n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 ? 2 : 0;
        bool valid = n != 0 && b < 0xF5 && i + n <= s.size();
        for (size_t k = 1; valid && k < n; ++k) valid = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
        if (valid && n == 3 && b == 0xE0) valid = static_cast<unsigned char>(s[i + 1]) >= 0xA0;  // overlong
        if (valid && n == 3 && b == 0xED) valid = static_cast<unsigned char>(s[i + 1]) < 0xA0;   // surrogate
        if (valid && n == 4 && b == 0xF0) valid = static_cast<unsigned char>(s[i + 1]) >= 0x90;  // overlong
        if (valid && n == 4 && b == 0xF4) valid = static_cast<unsigned char>(s[i + 1]) < 0x90;   // > U+10FFFF
        if (!valid) {
            std::snprintf(buf, sizeof buf, "\\x%02x", b);
            out += buf;
            ++i;
        } else if (n == 2 && b == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
            std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(s[i + 1]));  // C1 control (CSI...)
            out += buf;
            i += 2;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    return out;
}

// One line of text: escaped, long strings cut.
std::string printable(std::string_view s, size_t limit = 72) {
    std::string out = escaped(s);
    if (out.size() <= limit) return out;
    size_t cut = limit;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
    return out.substr(0, cut) + "…";
}

std::string value_text(const Value& v) {
    if (v.type() == ValueType::STRING) return printable(v.as_string());
    if (v.type() != ValueType::ARRAY) return value_json(v, 0).dump();
    std::string out = "[";
    const uint64_t shown = std::min<uint64_t>(v.size(), 6);
    for (uint64_t i = 0; i < shown; ++i) {
        if (i) out += ", ";
        const Value item = v.item(i);
        out += item.type() == ValueType::STRING ? "\"" + printable(item.as_string(), 24) + "\"" : value_text(item);
    }
    if (shown < v.size()) out += ", … " + std::to_string(v.size()) + " items";
    return out + "]";
}

std::string shape_text(const gguf::TensorInfo& t) {
    std::string out;
    for (uint32_t d = 0; d < t.n_dims; ++d) out += (d ? " x " : "") + std::to_string(t.shape[d]);
    return out;
}

std::string yes_no(bool b) { return b ? "yes" : "no"; }

// The tokenizer.ggml.model and tokenizer.ggml.pre of a file, and whether Ember's tokenizer knows them.
struct TokenizerNames {
    std::optional<std::string> model;
    std::optional<std::string> pre;
    bool model_known = false;
    bool pre_known = false;
};

std::optional<std::string> string_key(const gguf::File& file, std::string_view key) {
    const Value* v = file.find(key);
    if (!v || v->type() != ValueType::STRING) return std::nullopt;
    return std::string(v->as_string());
}

TokenizerNames tokenizer_names(const gguf::File& file) {
    TokenizerNames names{string_key(file, "tokenizer.ggml.model"), string_key(file, "tokenizer.ggml.pre")};
    const auto known = [](const std::vector<std::string>& list, const std::optional<std::string>& name) {
        return name && std::find(list.begin(), list.end(), *name) != list.end();
    };
    names.model_known = known(Tokenizer::supported_models(), names.model);
    names.pre_known = known(Tokenizer::supported_pre_tokenizers(), names.pre);
    return names;
}

ordered_json optional_json(const std::optional<std::string>& s) {
    return s ? ordered_json(*s) : ordered_json(nullptr);
}

}  // namespace

ordered_json gguf_to_json(const gguf::File& file, uint64_t max_array) {
    ordered_json doc;
    doc["file"] = file.name();
    doc["size"] = file.size();
    doc["version"] = file.version();
    doc["alignment"] = file.alignment();
    doc["data_offset"] = file.data_offset();

    ordered_json metadata = ordered_json::object();
    for (const gguf::KeyValue& kv : file.metadata())
        metadata[std::string(kv.key)] = {{"type", kv.value.type_name()}, {"value", value_json(kv.value, max_array)}};
    doc["metadata"] = std::move(metadata);

    ordered_json tensors = ordered_json::array();
    for (const gguf::TensorInfo& t : file.tensors()) {
        ordered_json shape = ordered_json::array();
        for (uint32_t d = 0; d < t.n_dims; ++d) shape.push_back(t.shape[d]);
        tensors.push_back({{"name", std::string(t.name)},
                           {"type", std::string(gguf::traits(t.type).name)},
                           {"type_id", static_cast<uint32_t>(t.type)},
                           {"shape", std::move(shape)},
                           {"offset", t.offset},
                           {"file_offset", file.data_offset() + t.offset},
                           {"bytes", t.n_bytes}});
    }
    doc["tensors"] = std::move(tensors);

    ordered_json totals = ordered_json::object();
    uint64_t all_bytes = 0;
    uint64_t all_elements = 0;
    for (const auto& [name, total] : totals_by_type(file)) {
        totals[name] = {{"tensors", total.tensors}, {"bytes", total.bytes}, {"elements", total.elements}};
        all_bytes += total.bytes;
        all_elements += total.elements;
    }
    doc["totals_by_type"] = std::move(totals);
    doc["total_bytes"] = all_bytes;
    doc["total_elements"] = all_elements;

    const gguf::Capabilities caps = gguf::describe(file);
    doc["capabilities"] = {
        {"architecture", caps.architecture},
        {"mtp_head", caps.has_mtp()},
        {"mtp_layers", caps.mtp_layers},
        {"mtp_tensors_present", caps.mtp_tensors_present},
        {"dflash_draft", caps.has_dflash()},
        {"dflash_embedded_marker", caps.dflash_marker},
        {"dflash_tensors", caps.dflash_tensors},
        {"vision_projector", caps.vision_projector},
        {"chat_template", caps.has_chat_template},
    };
    const TokenizerNames tok = tokenizer_names(file);
    doc["capabilities"]["tokenizer_model"] = optional_json(tok.model);
    doc["capabilities"]["tokenizer_model_known"] = tok.model_known;
    doc["capabilities"]["pre_tokenizer"] = optional_json(tok.pre);
    doc["capabilities"]["pre_tokenizer_known"] = tok.pre_known;
    if (const std::optional<DraftReport> draft = report_draft(file, caps))
        doc["capabilities"]["dflash"] = draft_json(*draft);
    if (caps.vision_projector) doc["capabilities"]["projector"] = projector_facts(file);
    return doc;
}

void print_gguf_report(const gguf::File& file, std::ostream& out) {
    out << file.name() << ": GGUF v" << file.version() << ", " << human_bytes(file.size()) << ", "
        << file.metadata().size() << " keys, " << file.tensors().size() << " tensors, alignment "
        << file.alignment() << ", data at offset " << file.data_offset() << "\n";

    size_t key_width = 0;
    for (const gguf::KeyValue& kv : file.metadata()) key_width = std::max(key_width, escaped(kv.key).size());
    out << "\nmetadata\n";
    char line[512];
    for (const gguf::KeyValue& kv : file.metadata()) {
        std::snprintf(line, sizeof line, "  %-*s  %-14s ", static_cast<int>(key_width), escaped(kv.key).c_str(),
                      kv.value.type_name().c_str());
        out << line << value_text(kv.value) << "\n";
    }

    size_t name_width = 4;
    for (const gguf::TensorInfo& t : file.tensors()) name_width = std::max(name_width, escaped(t.name).size());
    out << "\ntensors\n";
    std::snprintf(line, sizeof line, "  %-*s  %-18s %-24s %12s\n", static_cast<int>(name_width), "name", "type",
                  "shape", "bytes");
    out << line;
    for (const gguf::TensorInfo& t : file.tensors()) {
        std::snprintf(line, sizeof line, "  %-*s  %-18s %-24s %12s\n", static_cast<int>(name_width),
                      escaped(t.name).c_str(), std::string(gguf::traits(t.type).name).c_str(), shape_text(t).c_str(),
                      human_bytes(t.n_bytes).c_str());
        out << line;
    }

    out << "\ntotals by type\n";
    uint64_t all_bytes = 0;
    uint64_t all_elements = 0;
    uint64_t all_tensors = 0;
    for (const auto& [name, total] : totals_by_type(file)) {
        const double bpw = total.elements ? 8.0 * static_cast<double>(total.bytes) / static_cast<double>(total.elements) : 0;
        std::snprintf(line, sizeof line, "  %-18s %6llu tensors %12s  %6.2f bits/weight\n", name.c_str(),
                      static_cast<unsigned long long>(total.tensors), human_bytes(total.bytes).c_str(), bpw);
        out << line;
        all_bytes += total.bytes;
        all_elements += total.elements;
        all_tensors += total.tensors;
    }
    const double bpw = all_elements ? 8.0 * static_cast<double>(all_bytes) / static_cast<double>(all_elements) : 0;
    std::snprintf(line, sizeof line, "  %-18s %6llu tensors %12s  %6.2f bits/weight\n", "all",
                  static_cast<unsigned long long>(all_tensors), human_bytes(all_bytes).c_str(), bpw);
    out << line;

    const gguf::Capabilities caps = gguf::describe(file);
    out << "\ncapabilities\n";
    out << "  architecture           " << (caps.architecture.empty() ? "(none)" : escaped(caps.architecture)) << "\n";
    out << "  MTP head               " << yes_no(caps.has_mtp());
    if (caps.mtp_layers > 0)
        out << " (" << escaped(caps.architecture) << ".nextn_predict_layers = " << caps.mtp_layers
            << (caps.mtp_tensors_present ? "" : ", nextn tensors missing") << ")";
    out << "\n  embedded DFlash draft  " << yes_no(caps.has_dflash());
    if (caps.has_dflash())
        out << " (" << caps.dflash_tensors << " dflash.* tensors, dflash.embedded "
            << (caps.dflash_marker ? "true" : "absent or false") << ")";
    if (const std::optional<DraftReport> draft = report_draft(file, caps)) {
        if (draft->standalone) out << "\n  standalone DFlash draft yes";
        out << "\n    " << escaped(describe_draft(draft->info));
        out << "\n    " << (draft->error.empty() ? std::string("valid") : "invalid: " + escaped(draft->error));
        for (const std::string& w : draft->warnings) out << "\n    warning: " << escaped(w);
    }
    out << "\n  vision projector       " << yes_no(caps.vision_projector) << "\n";
    if (caps.vision_projector) out << "    " << escaped(projector_facts(file)) << "\n";
    out << "  chat template          " << yes_no(caps.has_chat_template) << "\n";
    const TokenizerNames tok = tokenizer_names(file);
    out << "  tokenizer              "
        << (!tok.model ? "(none)" : escaped(*tok.model) + (tok.model_known ? "" : " (Ember does not know it)")) << "\n";
    // Byte-level BPE ("gpt2") cannot do without its pre-tokenizer; the other models use none.
    const bool bpe = tok.model == "gpt2";
    if (tok.pre || bpe) {
        out << "  pre-tokenizer          ";
        if (!tok.pre)
            out << "(missing: Ember needs one for byte-level BPE)";
        else if (!bpe)
            out << escaped(*tok.pre) << " (not used by this tokenizer model)";
        else
            out << escaped(*tok.pre) << (tok.pre_known ? " (Ember knows it)" : " (Ember does not know it)");
        out << "\n";
    }
}

}  // namespace ember::cli
