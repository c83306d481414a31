// SPDX-License-Identifier: MIT
// Tokenizers built from a GGUF file's `tokenizer.ggml.*` metadata: byte-level BPE (`gpt2`, with the pre-tokenizer
// named by `tokenizer.ggml.pre`, run with PCRE2) and SentencePiece BPE with byte fallback (`llama`), special and
// added tokens, and a stream-safe detokenizer. The results must equal what the Hugging Face tokenizer of the same
// model gives: one wrong token silently degrades every answer.
//
// A Tokenizer owns a copy of its vocabulary (it does not need the gguf::File afterwards) and is cheap to copy:
// copies share the same immutable tables. Every const method is safe to call from several threads at once.
// Bad metadata and out-of-range token ids give an ember::Error with a one-line message; no input may crash it,
// make it hang, or make it allocate more than a small multiple of the input.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ember/error.h"

namespace ember {

namespace gguf {
class File;
}

// As stored in tokenizer.ggml.token_type.
enum class TokenType : int32_t {
    undefined = 0,
    normal = 1,
    unknown = 2,
    control = 3,
    user_defined = 4,
    unused = 5,
    byte = 6,
};

class Tokenizer {
public:
    // Throws ember::Error "<file>: tokenizer: ..." for missing or invalid tokenizer.ggml.* keys, or an unsupported
    // model or pre-tokenizer (naming it and listing the supported ones).
    static Tokenizer from_gguf(const gguf::File& file);

    // Supported values of tokenizer.ggml.model and (for gpt2) tokenizer.ggml.pre, for messages and --help.
    static std::vector<std::string> supported_models();
    static std::vector<std::string> supported_pre_tokenizers();

    int32_t n_vocab() const;
    std::string_view model() const;          // tokenizer.ggml.model: "gpt2" or "llama"
    std::string_view pre_tokenizer() const;  // tokenizer.ggml.pre ("" when absent)

    // add_special: add BOS/EOS as the file's add_bos/add_eos flags say. parse_special: recognise control,
    // user-defined and unknown-type tokens written in the text (e.g. "<|im_start|>") as single tokens (longest
    // match first); otherwise the text is tokenized as plain text. Invalid UTF-8 is kept byte for byte (byte-level
    // BPE and byte fallback can represent any byte).
    std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

    // The bytes a token stands for (byte-level BPE decoded to raw bytes, "▁" as a space, <0xXX> as the byte; may be
    // a partial UTF-8 sequence). Control, unknown-type and unused tokens give their text only when `special` is
    // true. Throws for an out-of-range id.
    std::string token_to_piece(int32_t id, bool special = false) const;
    // The pieces joined. For SentencePiece with add_space_prefix, the space the encoder put in front of the text
    // (and after each special token) is removed again, so decode(encode(x)) == x.
    std::string decode(std::span<const int32_t> ids, bool special = false) const;

    std::string_view token_text(int32_t id) const;  // as stored in the vocabulary
    TokenType token_type(int32_t id) const;
    float token_score(int32_t id) const;  // tokenizer.ggml.scores (0 when absent)
    std::optional<int32_t> find_token(std::string_view text) const;

    int32_t bos_id() const;  // -1 if none
    int32_t eos_id() const;
    int32_t eot_id() const;  // tokenizer.ggml.eot_token_id, or a known end-of-turn token such as <|im_end|>
    int32_t eom_id() const;
    int32_t unk_id() const;
    int32_t pad_id() const;
    bool add_bos() const;
    bool add_eos() const;
    bool add_space_prefix() const;  // SentencePiece only
    // eos, eot, eom, and known end tokens such as <|im_end|>, <|endoftext|>, <|eot_id|>, <end_of_turn>.
    bool is_end_of_generation(int32_t id) const;

    struct Impl;

private:
    friend class StreamDecoder;
    explicit Tokenizer(std::shared_ptr<const Impl> impl);
    const Impl& impl() const { return *impl_; }

    std::shared_ptr<const Impl> impl_;
};

// Stream-safe detokenizer: returns only complete UTF-8; holds back a partial sequence until the next token.
// The concatenation of everything push() and flush() return equals decode(ids) wherever that is valid UTF-8;
// bytes that can never become valid UTF-8 are replaced by U+FFFD as soon as that is certain.
class StreamDecoder {
public:
    explicit StreamDecoder(const Tokenizer& tokenizer, bool special = false);
    std::string push(int32_t id);
    std::string flush();  // whatever is held back (invalid bytes replaced by U+FFFD)

private:
    Tokenizer tokenizer_;
    bool special_;
    bool at_text_start_ = true;
    std::string pending_;
};

}  // namespace ember
