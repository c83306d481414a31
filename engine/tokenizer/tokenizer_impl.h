// SPDX-License-Identifier: MIT
// What a Tokenizer shares between its copies: the vocabulary and the models built from it, immutable after
// construction (apart from the BPE word cache, which guards itself).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ember/tokenizer.h"
#include "tokenizer/bpe.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/spm.h"
#include "tokenizer/vocab.h"

namespace ember {

struct Tokenizer::Impl {
    Impl(const gguf::File& file, tokenizer::Vocab&& vocab);

    tokenizer::Vocab vocab;
    tokenizer::SpecialTokenMatcher special;
    std::optional<tokenizer::PreTokenizer> pre;  // byte-level BPE only
    std::unique_ptr<tokenizer::BpeModel> bpe;
    std::unique_ptr<tokenizer::SpmModel> spm;
    std::vector<char> pieces;  // token_to_piece of every token, back to back
    std::vector<uint64_t> piece_offsets;
    std::vector<int32_t> end_of_generation;  // sorted

    void check_id(int32_t id) const;
    std::string_view piece(int32_t id) const {
        return {pieces.data() + piece_offsets[id], piece_offsets[id + 1] - piece_offsets[id]};
    }
    // Appends the text of one plain-text fragment's tokens.
    void encode_text(std::string_view text, std::vector<int32_t>& out) const;
    // Appends what token `id` decodes to. `at_text_start` carries the SentencePiece rule between calls: the first
    // text token of a segment (at the start or after a special token) loses the space the encoder put there.
    void append_piece(int32_t id, bool special, bool& at_text_start, std::string& out) const;
};

}  // namespace ember
