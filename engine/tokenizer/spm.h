// SPDX-License-Identifier: MIT
// SentencePiece BPE (tokenizer.ggml.model "llama", as in Llama 2, Phi-3 and Gemma GGUFs): the text, with spaces
// already written as "▁", starts as one symbol per UTF-8 character; the adjacent pair whose concatenation is the
// normal token with the highest score is merged until none is left (leftmost first among equal scores). A
// character that is not a token is written as its bytes' <0xXX> tokens (byte fallback), else as the unknown token.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace ember::tokenizer {

class SpmModel {
public:
    explicit SpmModel(const Vocab& vocab);

    void encode(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) const;

private:
    std::array<int32_t, 256> byte_token_{};  // <0xXX>, -1 if absent
};

}  // namespace ember::tokenizer
