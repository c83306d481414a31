// SPDX-License-Identifier: MIT
// Reading the vocabulary: token texts, types, scores and special ids.
#include "tokenizer/vocab.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>

#include "ember/gguf.h"

namespace ember::tokenizer {

namespace {

using gguf::ValueType;

bool is_integer_type(ValueType t) {
    switch (t) {
        case ValueType::U8:
        case ValueType::I8:
        case ValueType::U16:
        case ValueType::I16:
        case ValueType::U32:
        case ValueType::I32:
        case ValueType::U64:
        case ValueType::I64:
            return true;
        default:
            return false;
    }
}

// Texts of tokens that end a turn or the whole generation in the chat formats Ember knows.
constexpr std::array<std::string_view, 15> kEndOfGenerationTexts = {
    "<|endoftext|>",
    "<|im_end|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<end_of_turn>",
    "<|end|>",
    "<|end_of_text|>",
    "<\xEF\xBD\x9C"
    "end\xE2\x96\x81"
    "of\xE2\x96\x81"
    "sentence\xEF\xBD\x9C>",  // <｜end▁of▁sentence｜>
    "<|EOT|>",
    "<EOT>",
    "</s>",
    "<|return|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
};
// Candidates for the end-of-turn token when tokenizer.ggml.eot_token_id is absent, in order of preference.
constexpr std::array<std::string_view, 6> kEndOfTurnTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|EOT|>", "<|endoftext|>",
};

}  // namespace

std::string message_prefix(const gguf::File& file) {
    return file.name() + ": tokenizer: ";
}

std::string message_value(std::string_view value) {
    size_t cut = std::min<size_t>(value.size(), 64);
    while (cut < value.size() && cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;
    std::string out;
    for (const char c : value.substr(0, cut)) {
        const auto b = static_cast<unsigned char>(c);
        if (b < 0x20 || b == 0x7F) {
            constexpr char kHex[] = "0123456789abcdef";
            out += "\\x";
            out += kHex[b >> 4];
            out += kHex[b & 15];
        } else {
            out += c;
        }
    }
    if (cut < value.size()) out += "...";
    return out;
}

const gguf::Value* find_key(const gguf::File& file, std::string_view key, std::string_view expected) {
    const gguf::Value* v = file.find(key);
    if (!v) return nullptr;
    bool ok = false;
    if (expected == "string")
        ok = v->type() == ValueType::STRING;
    else if (expected == "bool")
        ok = v->type() == ValueType::BOOL;
    else if (expected == "integer")
        ok = is_integer_type(v->type());
    else if (expected == "array[string]")
        ok = v->type() == ValueType::ARRAY && v->element_type() == ValueType::STRING;
    else if (expected == "array[integer]")
        ok = v->type() == ValueType::ARRAY && is_integer_type(v->element_type());
    else if (expected == "array[f32]")
        ok = v->type() == ValueType::ARRAY && v->element_type() == ValueType::F32;
    if (!ok)
        throw Error(message_prefix(file) + "key '" + std::string(key) + "' has type " + v->type_name() + ", expected " +
                    std::string(expected));
    return v;
}

Vocab Vocab::load(const gguf::File& file) {
    const std::string where = message_prefix(file);
    Vocab vocab;
    vocab.file_name_ = file.name();

    const gguf::Value* model = find_key(file, "tokenizer.ggml.model", "string");
    if (!model) throw Error(where + "missing key 'tokenizer.ggml.model'");
    vocab.model_name_ = model->as_string();
    if (vocab.model_name_ == "gpt2") {
        vocab.kind_ = ModelKind::bpe;
    } else if (vocab.model_name_ == "llama") {
        vocab.kind_ = ModelKind::spm;
    } else {
        throw Error(where + "tokenizer.ggml.model '" + message_value(vocab.model_name_) +
                    "' is not supported (supported: gpt2, llama)");
    }
    if (const gguf::Value* pre = find_key(file, "tokenizer.ggml.pre", "string")) vocab.pre_ = pre->as_string();

    const gguf::Value* tokens = find_key(file, "tokenizer.ggml.tokens", "array[string]");
    if (!tokens) throw Error(where + "missing key 'tokenizer.ggml.tokens'");
    const uint64_t n = tokens->size();
    if (n == 0) throw Error(where + "tokenizer.ggml.tokens is empty");
    if (n > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
        throw Error(where + "tokenizer.ggml.tokens has " + std::to_string(n) + " tokens, more than ids can number");

    uint64_t total = 0;
    for (uint64_t i = 0; i < n; ++i) total += tokens->string_at(i).size();
    vocab.text_.reserve(total);
    vocab.offsets_.reserve(n + 1);
    for (uint64_t i = 0; i < n; ++i) {
        vocab.offsets_.push_back(vocab.text_.size());
        const std::string_view text = tokens->string_at(i);
        vocab.text_.insert(vocab.text_.end(), text.begin(), text.end());
    }
    vocab.offsets_.push_back(vocab.text_.size());

    vocab.types_.assign(n, TokenType::normal);
    if (const gguf::Value* types = find_key(file, "tokenizer.ggml.token_type", "array[integer]")) {
        if (types->size() != n)
            throw Error(where + "tokenizer.ggml.token_type has " + std::to_string(types->size()) +
                        " entries, expected " + std::to_string(n) + " (one per token)");
        const std::vector<int64_t> values = types->int_array();
        for (uint64_t i = 0; i < n; ++i) {
            if (values[i] < 0 || values[i] > static_cast<int64_t>(TokenType::byte))
                throw Error(where + "tokenizer.ggml.token_type[" + std::to_string(i) +
                            "] = " + std::to_string(values[i]) + " is not a token type (expected 0..6)");
            vocab.types_[i] = static_cast<TokenType>(values[i]);
        }
    }

    if (const gguf::Value* scores = find_key(file, "tokenizer.ggml.scores", "array[f32]")) {
        if (scores->size() != n)
            throw Error(where + "tokenizer.ggml.scores has " + std::to_string(scores->size()) + " entries, expected " +
                        std::to_string(n) + " (one per token)");
        vocab.scores_ = scores->float_array();
    } else if (vocab.kind_ == ModelKind::spm) {
        throw Error(where + "missing key 'tokenizer.ggml.scores' (SentencePiece merges by score)");
    }

    vocab.ids_.build(static_cast<int32_t>(n), [&](int32_t id) { return vocab.text(id); });

    const auto special_id = [&](std::string_view name) -> int32_t {
        const std::string key = "tokenizer.ggml." + std::string(name) + "_token_id";
        const gguf::Value* v = find_key(file, key, "integer");
        if (!v) return -1;
        int64_t id = std::numeric_limits<int64_t>::max();
        try {
            id = v->as_int();
        } catch (const Error&) {  // a u64 beyond int64_t: out of range like any other large id
        }
        if (id == -1) return -1;  // written by some converters for "none"
        if (id < 0 || static_cast<uint64_t>(id) >= n)
            throw Error(where + key + " = " + std::to_string(id) + " is out of range (the vocabulary has " +
                        std::to_string(n) + " tokens)");
        return static_cast<int32_t>(id);
    };
    vocab.bos = special_id("bos");
    vocab.eos = special_id("eos");
    vocab.unk = special_id("unknown");
    vocab.pad = special_id("padding");
    vocab.sep = special_id("seperator");  // sic: the GGUF key is spelt this way
    vocab.eot = special_id("eot");
    vocab.eom = special_id("eom");

    const auto find_special = [&](std::string_view text) -> int32_t {
        const auto id = vocab.find(text);
        if (!id) return -1;
        const TokenType t = vocab.type(*id);
        return t == TokenType::control || t == TokenType::user_defined ? *id : -1;
    };
    if (vocab.eot < 0) {
        for (std::string_view text : kEndOfTurnTexts) {
            vocab.eot = find_special(text);
            if (vocab.eot >= 0) break;
        }
    }
    if (vocab.eom < 0) vocab.eom = find_special("<|eom_id|>");

    const auto flag = [&](std::string_view name, bool fallback) {
        const gguf::Value* v = find_key(file, "tokenizer.ggml." + std::string(name), "bool");
        return v ? v->as_bool() : fallback;
    };
    const bool spm = vocab.kind_ == ModelKind::spm;
    vocab.add_bos = flag("add_bos_token", spm);
    vocab.add_eos = flag("add_eos_token", false);
    vocab.add_space_prefix = flag("add_space_prefix", spm);
    return vocab;
}

std::vector<int32_t> end_of_generation_ids(const Vocab& vocab) {
    std::vector<int32_t> ids;
    for (int32_t id : {vocab.eos, vocab.eot, vocab.eom})
        if (id >= 0) ids.push_back(id);
    const auto special = [&](std::string_view text) -> std::optional<int32_t> {
        const auto id = vocab.find(text);
        if (id && (vocab.type(*id) == TokenType::control || vocab.type(*id) == TokenType::user_defined)) return id;
        return std::nullopt;
    };
    for (std::string_view text : kEndOfGenerationTexts)
        if (const auto id = special(text)) ids.push_back(*id);
    // The harmony format (gpt-oss): <|end|> closes one message (the reasoning before the answer) and the answer
    // ends with <|return|>, or with <|call|> when it calls a tool; so <|end|> goes on, whatever the keys say.
    const auto call = special("<|call|>"), end = special("<|end|>");
    if (call && special("<|return|>")) {
        ids.push_back(*call);
        if (end) std::erase(ids, *end);
    }
    return ids;
}

}  // namespace ember::tokenizer
