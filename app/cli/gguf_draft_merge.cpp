// SPDX-License-Identifier: MIT
#include "gguf_draft_merge.h"

#include <iostream>

#include "gguf_draft_report.h"

namespace ember::cli {

namespace {

[[noreturn]] void fail(const gguf::File& file, const std::string& problem) {
    throw Error(file.name() + ": " + problem);
}

std::span<const int64_t> dims(const gguf::TensorInfo& t) {
    return {t.shape.data(), t.n_dims};
}

// The tensor is referenced in the input's mapping: the writer copies it from there into the output file.
void copy_tensor(gguf::Writer& out, std::string name, const gguf::File& in, const gguf::TensorInfo& t) {
    out.add_tensor(std::move(name), t.type, dims(t), in.tensor_data(t));
}

// §7.1 steps 2-3, before the checks of §6 step 4 that read_dflash makes.
void check_draft_against(const gguf::File& draft, const gguf::File& target) {
    if (!model::is_standalone_draft(draft))
        fail(draft, "general.architecture is '" + std::string(draft.get_string("general.architecture", "")) +
                        "', expected 'dflash' or 'dflash-draft'");
    for (const gguf::TensorInfo& t : draft.tensors())
        if (t.name.starts_with("token_embd.") || t.name.starts_with("output."))
            fail(draft,
                 "a DFlash draft must not contain tensor '" + std::string(t.name) + "' (it borrows the target's)");
    const gguf::Value* tokens = draft.find("tokenizer.ggml.tokens");
    const gguf::Value* target_tokens = target.find("tokenizer.ggml.tokens");
    if (tokens && target_tokens && tokens->size() != target_tokens->size())
        fail(draft, "the draft's vocabulary has " + std::to_string(tokens->size()) + " tokens, the target's has " +
                        std::to_string(target_tokens->size()));
}

bool has_draft_parts(const gguf::File& file) {
    for (const gguf::KeyValue& kv : file.metadata())
        if (kv.key.starts_with(model::kDraftPrefix)) return true;
    for (const gguf::TensorInfo& t : file.tensors())
        if (t.name.starts_with(model::kDraftPrefix)) return true;
    return false;
}

void print_summary(const std::filesystem::path& path, const DraftWriteSummary& s, const char* what) {
    std::cout << "wrote " << path.string() << ": " << what << " (" << s.target_tensors << " target tensors + "
              << s.draft_tensors << " draft tensors; draft: " << describe_draft(s.draft) << ")\n";
}

model::DFlashWarning stderr_warnings() {
    return [](const std::string& line) { std::cerr << "warning: " << line << "\n"; };
}

int usage_error(const std::string& command, const std::string& message) {
    std::cerr << "ember-gguf " << command << ": " << message << "\n"
              << (command == "merge-draft"
                      ? "usage: ember-gguf merge-draft TARGET.gguf DRAFT.gguf -o OUT.gguf [--replace]\n"
                      : "usage: ember-gguf split-draft IN.gguf -o DRAFT.gguf [--target-out TARGET.gguf]\n");
    return 2;
}

}  // namespace

DraftWriteSummary merge_draft(const std::filesystem::path& target_path, const std::filesystem::path& draft_path,
                              const std::filesystem::path& out, bool replace, const model::DFlashWarning& warn) {
    const gguf::File target = gguf::File::open(target_path);
    if (model::is_standalone_draft(target)) fail(target, "is a standalone DFlash draft, not a target model");
    const bool drafted = model::is_drafted(target, warn);
    if (drafted && !replace) fail(target, "already carries a DFlash draft (use --replace to replace it)");
    if (!replace && has_draft_parts(target))
        fail(target, "has dflash.* keys or tensors but no draft marker (use --replace to drop them)");
    const gguf::File draft = gguf::File::open(draft_path);
    check_draft_against(draft, target);
    DraftWriteSummary summary;
    summary.draft = model::read_dflash(draft, "", model::dflash_target(target), warn);
    const auto mask = static_cast<uint32_t>(summary.draft.mask_token);

    // With replace, the target part is what split-draft --target-out would give back.
    auto old_draft_part = [&](std::string_view name) { return replace && name.starts_with(model::kDraftPrefix); };
    const std::optional<int64_t> old_mask = drafted ? model::dflash_mask_token(target) : std::nullopt;
    auto old_mask_key = [&](const gguf::KeyValue& kv) {
        return old_mask && kv.key == "tokenizer.ggml.mask_token_id" && kv.value.is_integer() &&
               kv.value.as_int() == *old_mask;
    };
    gguf::Writer writer(target.alignment());
    for (const gguf::KeyValue& kv : target.metadata())
        if (!old_draft_part(kv.key) && !old_mask_key(kv)) writer.set(std::string(kv.key), gguf::to_owned(kv.value));
    for (const gguf::KeyValue& kv : draft.metadata())
        if (kv.key.starts_with(model::kDraftPrefix)) writer.set(std::string(kv.key), gguf::to_owned(kv.value));
    writer.set("dflash.embedded", true);
    writer.set("dflash.mask_token_id", mask);
    writer.set("tokenizer.ggml.mask_token_id", mask);

    for (const gguf::TensorInfo& t : target.tensors()) {
        if (old_draft_part(t.name)) continue;
        copy_tensor(writer, std::string(t.name), target, t);
        ++summary.target_tensors;
    }
    for (const gguf::TensorInfo& t : draft.tensors()) {
        copy_tensor(writer, std::string(model::kDraftPrefix) + std::string(t.name), draft, t);
        ++summary.draft_tensors;
    }
    writer.write(out);
    return summary;
}

DraftWriteSummary split_draft(const std::filesystem::path& drafted_path, const std::filesystem::path& draft_out,
                              const std::optional<std::filesystem::path>& target_out,
                              const model::DFlashWarning& warn) {
    const gguf::File file = gguf::File::open(drafted_path);
    std::optional<model::DFlashInfo> info = model::find_dflash(file, warn);
    if (!info) fail(file, "is not a drafted GGUF (no dflash.embedded marker and no dflash.fc.weight)");
    DraftWriteSummary summary;
    summary.draft = std::move(*info);
    const auto mask = static_cast<uint32_t>(summary.draft.mask_token);

    gguf::Writer draft(file.alignment());
    draft.set("general.architecture", std::string("dflash"));
    for (const gguf::KeyValue& kv : file.metadata())
        if (kv.key.starts_with(model::kDraftPrefix) && kv.key != "dflash.embedded" && kv.key != "dflash.mask_token_id")
            draft.set(std::string(kv.key), gguf::to_owned(kv.value));
    for (const gguf::KeyValue& kv : file.metadata())
        if (kv.key.starts_with("tokenizer.")) draft.set(std::string(kv.key), gguf::to_owned(kv.value));
    draft.set("tokenizer.ggml.mask_token_id", mask);
    for (const gguf::TensorInfo& t : file.tensors()) {
        if (!t.name.starts_with(model::kDraftPrefix)) continue;
        copy_tensor(draft, std::string(t.name.substr(model::kDraftPrefix.size())), file, t);
        ++summary.draft_tensors;
    }
    summary.target_tensors = file.tensors().size() - summary.draft_tensors;

    if (target_out) {
        gguf::Writer target(file.alignment());
        for (const gguf::KeyValue& kv : file.metadata()) {
            if (kv.key.starts_with(model::kDraftPrefix)) continue;
            if (kv.key == "tokenizer.ggml.mask_token_id" && kv.value.is_integer() && kv.value.as_int() == int64_t{mask})
                continue;
            target.set(std::string(kv.key), gguf::to_owned(kv.value));
        }
        for (const gguf::TensorInfo& t : file.tensors())
            if (!t.name.starts_with(model::kDraftPrefix)) copy_tensor(target, std::string(t.name), file, t);
        target.write(*target_out);
    }
    draft.write(draft_out);
    return summary;
}

int merge_draft_command(const std::vector<std::string>& args) {
    std::vector<std::string> inputs;
    std::string out;
    bool replace = false;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "-o" || args[i] == "--output") {
            if (++i == args.size()) return usage_error("merge-draft", args[i - 1] + " needs a file");
            out = args[i];
        } else if (args[i] == "--replace") {
            replace = true;
        } else if (!args[i].empty() && args[i][0] == '-') {
            return usage_error("merge-draft", "unknown option '" + args[i] + "'");
        } else {
            inputs.push_back(args[i]);
        }
    }
    if (inputs.size() != 2) return usage_error("merge-draft", "needs a TARGET and a DRAFT file");
    if (out.empty()) return usage_error("merge-draft", "needs -o OUT.gguf");
    try {
        print_summary(out, merge_draft(inputs[0], inputs[1], out, replace, stderr_warnings()), "drafted GGUF");
    } catch (const Error& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
    return 0;
}

int split_draft_command(const std::vector<std::string>& args) {
    std::string in, out;
    std::optional<std::filesystem::path> target_out;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "-o" || args[i] == "--output" || args[i] == "--target-out") {
            if (i + 1 == args.size()) return usage_error("split-draft", args[i] + " needs a file");
            if (args[i] == "--target-out")
                target_out = args[i + 1];
            else
                out = args[i + 1];
            ++i;
        } else if (!args[i].empty() && args[i][0] == '-') {
            return usage_error("split-draft", "unknown option '" + args[i] + "'");
        } else if (in.empty()) {
            in = args[i];
        } else {
            return usage_error("split-draft", "more than one input file given");
        }
    }
    if (in.empty()) return usage_error("split-draft", "needs a drafted IN.gguf");
    if (out.empty()) return usage_error("split-draft", "needs -o DRAFT.gguf");
    try {
        const DraftWriteSummary summary = split_draft(in, out, target_out, stderr_warnings());
        print_summary(out, summary, "standalone DFlash draft");
        if (target_out) std::cout << "wrote " << target_out->string() << ": the target without its draft\n";
    } catch (const Error& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
    return 0;
}

}  // namespace ember::cli
