// SPDX-License-Identifier: MIT
// The vocabulary part of tokenizer.ggml.*: token texts, types and scores, the special token ids and the flags,
// copied out of the GGUF file and checked.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ember/tokenizer.h"
#include "tokenizer/hash_tables.h"

namespace ember::gguf {
class File;
class Value;
}  // namespace ember::gguf

namespace ember::tokenizer {

enum class ModelKind { bpe, spm };

class Vocab {
public:
    // Throws ember::Error "<file>: tokenizer: ..." for a missing or invalid key.
    static Vocab load(const gguf::File& file);

    Vocab(const Vocab&) = delete;
    Vocab& operator=(const Vocab&) = delete;
    Vocab(Vocab&&) = default;

    int32_t size() const { return static_cast<int32_t>(types_.size()); }
    std::string_view text(int32_t id) const {
        return std::string_view(text_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]);
    }
    TokenType type(int32_t id) const { return types_[id]; }
    float score(int32_t id) const { return scores_.empty() ? 0.0f : scores_[id]; }
    // The lowest id whose text is `text`.
    std::optional<int32_t> find(std::string_view text) const {
        return ids_.find(text, [this](int32_t id) { return this->text(id); });
    }

    const std::string& file_name() const { return file_name_; }
    ModelKind kind() const { return kind_; }
    const std::string& model_name() const { return model_name_; }
    const std::string& pre() const { return pre_; }

    int32_t bos = -1, eos = -1, eot = -1, eom = -1, unk = -1, pad = -1, sep = -1;
    bool add_bos = false, add_eos = false, add_space_prefix = false;

private:
    Vocab() = default;

    std::string file_name_;
    ModelKind kind_ = ModelKind::bpe;
    std::string model_name_;
    std::string pre_;
    std::vector<char> text_;         // all token texts, back to back
    std::vector<uint64_t> offsets_;  // token i is text_[offsets_[i], offsets_[i + 1])
    std::vector<TokenType> types_;
    std::vector<float> scores_;  // empty when the file has none
    TextIndex ids_;
};

// eos, eot, eom and every control or user-defined token whose text is a known end-of-turn marker.
std::vector<int32_t> end_of_generation_ids(const Vocab& vocab);

// "<file>: tokenizer: " for messages.
std::string message_prefix(const gguf::File& file);
// A string value from the file as an error message may show it: control characters escaped (\xNN), so the
// message stays one line, and cut after 64 bytes.
std::string message_value(std::string_view value);
// The key's value if present, after checking its type ("string", "bool", "integer", "array[string]",
// "array[integer]", "array[f32]"); nullptr when absent.
const gguf::Value* find_key(const gguf::File& file, std::string_view key, std::string_view expected);

}  // namespace ember::tokenizer
