// SPDX-License-Identifier: MIT
// Pre-tokenizers: the regexes that cut text into words before byte-level BPE, one preset per tokenizer.ggml.pre
// name (the presets are in pre_tokenizer_presets.cpp), run with PCRE2 (UTF-8, Unicode properties, JIT where
// available).
//
// A preset is a sequence of stages as in Hugging Face's Sequence pre-tokenizer: each stage splits every piece the
// previous one made, keeping both the matches and the text between them (the "isolated" behaviour). A regex sees
// only its piece, so lookaheads and `$` stop at the piece's end. Invalid UTF-8 bytes are kept as pieces of their
// own that no regex touches.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ember::tokenizer {

// What a regex stage runs on: the text itself, or its byte-level form (Hugging Face pipelines that put Digits or
// Split after ByteLevel, as Falcon's does, see 'Â½' where the text has '½').
enum class RegexDomain { text, byte_level };

struct RegexStage {
    std::string_view pattern;  // as written in the model's tokenizer.json, or its PCRE2 equivalent where they differ
    RegexDomain domain = RegexDomain::text;
};

struct PreTokenizerSpec {
    std::string_view name;  // tokenizer.ggml.pre
    std::vector<std::string_view> aliases;
    std::vector<RegexStage> stages;
    bool nfc = false;            // NFC-normalize text first (the model's tokenizer.json has an NFC normalizer)
    bool ignore_merges = false;  // a piece that is itself a token is taken whole (BPE ignore_merges; tiktoken)
};

// nullptr for an unknown name (neither a preset's name nor one of its aliases).
const PreTokenizerSpec* find_pre_tokenizer(std::string_view name);
// Every name find_pre_tokenizer knows, each preset's name followed by its aliases.
std::vector<std::string> pre_tokenizer_names();
// The presets, each once.
const std::vector<PreTokenizerSpec>& pre_tokenizer_presets();

// Rewrites a tokenizer.json regex (Oniguruma syntax) for PCRE2 where the two differ: `\s` and `\S` become
// \p{White_Space} and \P{White_Space}, because PCRE2's Unicode `\s` also matches U+180E, which Oniguruma's does not.
std::string adapt_pattern_for_pcre2(std::string_view pattern);

struct Piece {
    size_t offset;
    size_t length;
    bool opaque;  // invalid UTF-8: passed on whole, never split
};

class PreTokenizer {
public:
    // Compiles the stages; throws ember::Error naming the preset on a pattern PCRE2 rejects.
    explicit PreTokenizer(const PreTokenizerSpec& spec);
    PreTokenizer(PreTokenizer&&) noexcept;
    PreTokenizer& operator=(PreTokenizer&&) noexcept;
    ~PreTokenizer();

    const PreTokenizerSpec& spec() const { return *spec_; }

    // Cuts `text` into pieces that cover it exactly, in order. Throws ember::Error if PCRE2 gives up on a match
    // (its match or memory limit).
    std::vector<Piece> split(std::string_view text) const;

private:
    struct CompiledStage;
    const PreTokenizerSpec* spec_;
    std::vector<std::unique_ptr<CompiledStage>> stages_;
};

}  // namespace ember::tokenizer
