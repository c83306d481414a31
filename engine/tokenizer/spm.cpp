// SPDX-License-Identifier: MIT
// SentencePiece BPE (tokenizer.ggml.model "llama"): encoding and decoding with spaces as ▁.
#include "tokenizer/spm.h"

#include <cstdio>
#include <queue>

#include "tokenizer/utf8.h"

namespace ember::tokenizer {

SpmModel::SpmModel(const Vocab& vocab) {
    for (unsigned b = 0; b < 256; ++b) {
        char text[8];
        std::snprintf(text, sizeof text, "<0x%02X>", b);
        const auto id = vocab.find(text);
        byte_token_[b] = id && vocab.type(*id) == TokenType::byte ? *id : -1;
    }
}

void SpmModel::encode(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) const {
    struct Symbol {
        size_t start;
        size_t length;  // 0 once merged into its left neighbour
        int32_t prev;
        int32_t next;
    };
    struct Candidate {
        float score;
        int32_t left;
        int32_t right;
        size_t length;  // of the merged text; a candidate is stale when its symbols no longer add up to it
    };
    struct LowerFirst {
        bool operator()(const Candidate& a, const Candidate& b) const {
            return a.score != b.score ? a.score < b.score : a.left > b.left;
        }
    };
    if (text.empty()) return;

    std::vector<Symbol> symbols;
    symbols.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const Utf8Scan scan = scan_utf8(text, i);
        const size_t length = scan.status == Utf8Status::valid ? scan.length : 1;
        const auto index = static_cast<int32_t>(symbols.size());
        symbols.push_back({i, length, index - 1, index + 1});
        i += length;
    }
    symbols.back().next = -1;

    std::priority_queue<Candidate, std::vector<Candidate>, LowerFirst> queue;
    const auto consider = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const size_t length = symbols[left].length + symbols[right].length;
        const auto id = vocab.find(text.substr(symbols[left].start, length));
        if (!id || vocab.type(*id) != TokenType::normal) return;
        queue.push({vocab.score(*id), left, right, length});
    };
    for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) consider(i, i + 1);

    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        Symbol& left = symbols[c.left];
        Symbol& right = symbols[c.right];
        if (left.length == 0 || right.length == 0 || left.next != c.right || left.length + right.length != c.length)
            continue;
        left.length = c.length;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = c.left;
        right.length = 0;
        consider(left.prev, c.left);
        consider(c.left, left.next);
    }

    for (int32_t i = 0; i >= 0; i = symbols[i].next) {
        const std::string_view piece = text.substr(symbols[i].start, symbols[i].length);
        const auto id = vocab.find(piece);
        const TokenType type = id ? vocab.type(*id) : TokenType::unknown;
        if (type == TokenType::normal || type == TokenType::user_defined || type == TokenType::undefined) {
            out.push_back(*id);
            continue;
        }
        bool all_bytes = true;
        for (const char c : piece) all_bytes = all_bytes && byte_token_[static_cast<uint8_t>(c)] >= 0;
        if (all_bytes) {
            for (const char c : piece) out.push_back(byte_token_[static_cast<uint8_t>(c)]);
        } else if (vocab.unk >= 0) {
            out.push_back(vocab.unk);
        }
    }
}

}  // namespace ember::tokenizer
