// SPDX-License-Identifier: MIT
// Helpers for the tokenizer tests: small vocabularies written as GGUF in memory, and the shared reference data.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/fixture_path.h"
#include "ember/gguf.h"
#include "ember/tokenizer.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"

namespace ember::test {

inline std::filesystem::path shared_data(const std::filesystem::path& relative) {
    return std::filesystem::path(EMBER_SHARED_DATA) / relative;
}

inline std::string read_text_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path.string());
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The 256 byte-level characters, as a byte-level BPE vocabulary starts.
inline std::vector<std::string> byte_level_alphabet() {
    std::vector<std::string> tokens;
    for (unsigned b = 0; b < 256; ++b) {
        std::string t;
        tokenizer::append_utf8(tokenizer::byte_to_codepoint(static_cast<uint8_t>(b)), t);
        tokens.push_back(t);
    }
    return tokens;
}

// A tokenizer description that becomes tokenizer.ggml.* keys. `keys` adds or overrides keys (e.g. the special
// token ids); `omit` leaves keys out.
struct VocabSpec {
    std::string model = "gpt2";
    std::string pre = "gpt-2";
    std::vector<std::string> tokens;
    std::vector<int32_t> types;  // empty: no token_type key
    std::vector<float> scores;   // empty: no scores key
    std::vector<std::string> merges;
    std::map<std::string, gguf::OwnedValue> keys;
    std::vector<std::string> omit;

    int32_t add(const std::string& text, TokenType type = TokenType::normal) {
        if (types.size() < tokens.size()) types.resize(tokens.size(), static_cast<int32_t>(TokenType::normal));
        tokens.push_back(text);
        types.push_back(static_cast<int32_t>(type));
        return static_cast<int32_t>(tokens.size() - 1);
    }
};

// A GGUF in memory and the File reading it (which needs the bytes to outlive it).
struct MemoryGguf {
    std::vector<std::byte> bytes;
    std::unique_ptr<gguf::File> file;
};

inline MemoryGguf write_vocab(const VocabSpec& spec, const std::string& name = "test.gguf") {
    gguf::Writer w;
    const auto omitted = [&](const std::string& key) {
        for (const auto& k : spec.omit)
            if (k == key) return true;
        return false;
    };
    const auto set = [&](const std::string& key, gguf::OwnedValue value) {
        if (!omitted(key)) w.set(key, std::move(value));
    };
    set("general.architecture", std::string("llama"));
    set("tokenizer.ggml.model", spec.model);
    if (!spec.pre.empty()) set("tokenizer.ggml.pre", spec.pre);
    set("tokenizer.ggml.tokens", gguf::make_string_array(spec.tokens));
    if (!spec.types.empty()) {
        std::vector<gguf::OwnedValue> items(spec.types.begin(), spec.types.end());
        set("tokenizer.ggml.token_type", gguf::make_array(gguf::ValueType::I32, std::move(items)));
    }
    if (!spec.scores.empty()) {
        std::vector<gguf::OwnedValue> items(spec.scores.begin(), spec.scores.end());
        set("tokenizer.ggml.scores", gguf::make_array(gguf::ValueType::F32, std::move(items)));
    }
    if (spec.model == "gpt2") set("tokenizer.ggml.merges", gguf::make_string_array(spec.merges));
    for (const auto& [key, value] : spec.keys) set(key, value);
    MemoryGguf out;
    out.bytes = w.to_bytes();
    out.file = std::make_unique<gguf::File>(gguf::File::from_memory(out.bytes, name));
    return out;
}

inline Tokenizer load_vocab(const VocabSpec& spec) {
    const MemoryGguf g = write_vocab(spec);
    return Tokenizer::from_gguf(*g.file);
}

inline Tokenizer load_file(const std::filesystem::path& path) {
    const gguf::File file = gguf::File::open(path);
    return Tokenizer::from_gguf(file);
}

// Texts of a ggml-vocab .inp file and the ids of its .out file.
struct VocabCase {
    std::string text;
    std::vector<int32_t> ids;
};

inline std::vector<VocabCase> read_vocab_cases(const std::filesystem::path& inp, const std::filesystem::path& out) {
    const std::string texts = read_text_file(inp);
    const std::string separator = "\n__ggml_vocab_test__\n";
    std::vector<VocabCase> cases;
    // Each text is followed by the separator line.
    for (size_t pos = 0;;) {
        const size_t hit = texts.find(separator, pos);
        if (hit == std::string::npos) break;
        cases.push_back({texts.substr(pos, hit - pos), {}});
        pos = hit + separator.size();
    }
    std::istringstream lines(read_text_file(out));
    std::string line;
    for (auto& c : cases) {
        if (!std::getline(lines, line)) throw std::runtime_error(out.string() + " has fewer lines than texts");
        c.ids.clear();
        std::istringstream ids(line);
        for (int32_t id; ids >> id;) c.ids.push_back(id);
    }
    return cases;
}

}  // namespace ember::test
