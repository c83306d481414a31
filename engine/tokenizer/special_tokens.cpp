// SPDX-License-Identifier: MIT
// Finding special tokens written in text.
#include "tokenizer/special_tokens.h"

namespace ember::tokenizer {

SpecialTokenMatcher::SpecialTokenMatcher(const Vocab& vocab) {
    nodes_.emplace_back();
    for (int32_t id = 0; id < vocab.size(); ++id) {
        const TokenType type = vocab.type(id);
        if (type != TokenType::control && type != TokenType::user_defined && type != TokenType::unknown) continue;
        const std::string_view text = vocab.text(id);
        if (text.empty()) continue;
        int32_t node = 0;
        for (const char c : text) {
            const auto byte = static_cast<unsigned char>(c);
            int32_t next = child(node, byte);
            if (next < 0) {
                next = static_cast<int32_t>(nodes_.size());
                nodes_[node].children.emplace_back(byte, next);
                nodes_.emplace_back();
            }
            node = next;
        }
        if (nodes_[node].token < 0) nodes_[node].token = id;  // the lowest id wins for a repeated text
        starts_[static_cast<unsigned char>(text[0])] = true;
    }
}

int32_t SpecialTokenMatcher::child(int32_t node, unsigned char byte) const {
    for (const auto& [b, index] : nodes_[node].children)
        if (b == byte) return index;
    return -1;
}

std::pair<int32_t, size_t> SpecialTokenMatcher::longest_at(std::string_view text, size_t pos) const {
    std::pair<int32_t, size_t> best{-1, 0};
    int32_t node = 0;
    for (size_t i = pos; i < text.size(); ++i) {
        node = child(node, static_cast<unsigned char>(text[i]));
        if (node < 0) break;
        if (nodes_[node].token >= 0) best = {nodes_[node].token, i + 1 - pos};
    }
    return best;
}

std::vector<SpecialTokenMatcher::Fragment> SpecialTokenMatcher::split(std::string_view text) const {
    std::vector<Fragment> fragments;
    size_t plain_start = 0;
    for (size_t pos = 0; pos < text.size();) {
        if (!starts_[static_cast<unsigned char>(text[pos])]) {
            ++pos;
            continue;
        }
        const auto [token, length] = longest_at(text, pos);
        if (token < 0) {
            ++pos;
            continue;
        }
        if (pos > plain_start) fragments.push_back({text.substr(plain_start, pos - plain_start), -1});
        fragments.push_back({text.substr(pos, length), token});
        pos += length;
        plain_start = pos;
    }
    if (plain_start < text.size()) fragments.push_back({text.substr(plain_start), -1});
    return fragments;
}

}  // namespace ember::tokenizer
