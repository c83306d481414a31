// SPDX-License-Identifier: MIT
// Finds special tokens written in text (control, user-defined and unknown-type tokens, e.g. "<|im_start|>"),
// leftmost first and the longest at each position, as Hugging Face's added-token matching does.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/vocab.h"

namespace ember::tokenizer {

class SpecialTokenMatcher {
public:
    explicit SpecialTokenMatcher(const Vocab& vocab);

    struct Fragment {
        std::string_view text;  // plain text when token < 0
        int32_t token;
    };
    // Text between matches as plain fragments (empty ones left out), each match as a token fragment.
    std::vector<Fragment> split(std::string_view text) const;

private:
    struct Node {
        std::vector<std::pair<unsigned char, int32_t>> children;  // byte, node index
        int32_t token = -1;
    };
    int32_t child(int32_t node, unsigned char byte) const;
    // The longest token that starts at text[pos] and its length; {-1, 0} if none.
    std::pair<int32_t, size_t> longest_at(std::string_view text, size_t pos) const;

    std::vector<Node> nodes_;
    bool starts_[256] = {};  // bytes that begin some special token
};

}  // namespace ember::tokenizer
