// SPDX-License-Identifier: MIT
// Byte-level BPE merges over pre-tokenized pieces.
#include "tokenizer/bpe.h"

#include <queue>

#include "ember/gguf.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"

namespace ember::tokenizer {

namespace {

std::string shown(std::string_view s) {
    return "'" + std::string(s.substr(0, 64)) + (s.size() > 64 ? "...'" : "'");
}

}  // namespace

BpeModel::BpeModel(const gguf::File& file, const Vocab& vocab, bool ignore_merges) : ignore_merges_(ignore_merges) {
    const std::string where = message_prefix(file);
    const gguf::Value* merges = find_key(file, "tokenizer.ggml.merges", "array[string]");
    if (!merges) throw Error(where + "missing key 'tokenizer.ggml.merges' (byte-level BPE needs its merges)");
    const uint64_t n = merges->size();
    merges_.reserve(n);
    std::string joined;
    for (uint64_t i = 0; i < n; ++i) {
        const std::string_view merge = merges->string_at(i);
        const auto fail = [&](const std::string& problem) {
            throw Error(where + "tokenizer.ggml.merges[" + std::to_string(i) + "] " + shown(merge) + problem);
        };
        const size_t space = merge.size() > 1 ? merge.find(' ', 1) : std::string_view::npos;
        if (space == std::string_view::npos || space + 1 == merge.size())
            fail(" is not two tokens separated by a space");
        const std::string_view left = merge.substr(0, space);
        const std::string_view right = merge.substr(space + 1);
        const auto left_id = vocab.find(left);
        const auto right_id = vocab.find(right);
        if (!left_id) fail(" names " + shown(left) + ", which is not a token");
        if (!right_id) fail(" names " + shown(right) + ", which is not a token");
        joined.assign(left).append(right);
        const auto result = vocab.find(joined);
        if (!result) fail(" makes " + shown(joined) + ", which is not a token");
        // A repeated pair takes its last rank, as Hugging Face's merge map does.
        merges_.insert_or_assign(pair_key(*left_id, *right_id), {static_cast<int32_t>(i), *result});
    }
    for (unsigned b = 0; b < 256; ++b) {
        std::string text;
        append_utf8(byte_to_codepoint(static_cast<uint8_t>(b)), text);
        const auto id = vocab.find(text);
        byte_token_[b] = id ? *id : -1;
    }
}

void BpeModel::encode_word(const Vocab& vocab, std::string_view word, std::vector<int32_t>& out) const {
    if (word.empty()) return;
    if (cache_.lookup(word, out)) return;
    const size_t first = out.size();
    std::optional<int32_t> whole;
    if (ignore_merges_) {
        whole = vocab.find(bytes_to_byte_level(word));
        if (whole && vocab.type(*whole) != TokenType::normal) whole.reset();
    }
    if (whole) {
        out.push_back(*whole);
    } else {
        merge_word(word, out);
    }
    cache_.store(word, std::span<const int32_t>(out).subspan(first));
}

void BpeModel::merge_word(std::string_view word, std::vector<int32_t>& out) const {
    struct Symbol {
        int32_t id;
        int32_t prev;
        int32_t next;
    };
    struct Candidate {
        int32_t rank;
        int32_t left;  // symbol index, which is also its position in the word
        int32_t right;
        int32_t left_id;
        int32_t right_id;
        int32_t result;
    };
    struct LaterFirst {
        bool operator()(const Candidate& a, const Candidate& b) const {
            return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
        }
    };

    // A byte whose character is not in the vocabulary is dropped, as Hugging Face's BPE without an unknown token
    // does; complete byte-level vocabularies never need this.
    std::vector<Symbol> symbols;
    symbols.reserve(word.size());
    for (const char c : word) {
        const int32_t id = byte_token_[static_cast<uint8_t>(c)];
        if (id < 0) continue;
        const auto index = static_cast<int32_t>(symbols.size());
        symbols.push_back({id, index - 1, index + 1});
    }
    if (symbols.empty()) return;
    symbols.back().next = -1;

    std::priority_queue<Candidate, std::vector<Candidate>, LaterFirst> queue;
    const auto consider = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const MergeTable::Merge* merge = merges_.find(pair_key(symbols[left].id, symbols[right].id));
        if (!merge) return;
        queue.push({merge->rank, left, right, symbols[left].id, symbols[right].id, merge->result});
    };
    for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) consider(i, i + 1);

    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        Symbol& left = symbols[c.left];
        // Stale when either side has been merged into something else since the candidate was queued.
        if (left.next != c.right || left.id != c.left_id || symbols[c.right].id != c.right_id) continue;
        Symbol& right = symbols[c.right];
        left.id = c.result;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = c.left;
        right.id = -1;
        right.next = -1;
        consider(left.prev, c.left);
        consider(c.left, left.next);
    }
    for (int32_t i = 0; i >= 0; i = symbols[i].next) out.push_back(symbols[i].id);
}

}  // namespace ember::tokenizer
