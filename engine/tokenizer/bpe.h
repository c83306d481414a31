// SPDX-License-Identifier: MIT
// Byte-level BPE (tokenizer.ggml.model "gpt2"): each pre-tokenizer piece starts as one token per byte and the
// adjacent pair with the lowest merge rank is merged until none is left (leftmost first among equal ranks), as
// Hugging Face's BPE model does.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/hash_tables.h"
#include "tokenizer/vocab.h"
#include "tokenizer/word_cache.h"

namespace ember::gguf {
class File;
}

namespace ember::tokenizer {

class BpeModel {
public:
    // Reads tokenizer.ggml.merges; throws ember::Error for a missing key or a merge that is not two tokens of the
    // vocabulary whose concatenation is a token too.
    BpeModel(const gguf::File& file, const Vocab& vocab, bool ignore_merges);

    // Appends the tokens of one piece of raw bytes.
    void encode_word(const Vocab& vocab, std::string_view word, std::vector<int32_t>& out) const;

    size_t merge_count() const { return merges_.size(); }

private:
    static uint64_t pair_key(int32_t left, int32_t right) {
        return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
    }
    void merge_word(std::string_view word, std::vector<int32_t>& out) const;

    MergeTable merges_;
    std::array<int32_t, 256> byte_token_{};  // the token of each byte's byte-level character, -1 if none
    bool ignore_merges_;
    mutable WordCache cache_{1 << 16, 256};
};

}  // namespace ember::tokenizer
