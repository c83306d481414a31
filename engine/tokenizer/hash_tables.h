// SPDX-License-Identifier: MIT
// Open-addressing hash tables for the two lookups that dominate tokenizer loading and BPE merging: token text to
// id, and token pair to merge. A vocabulary of 250k tokens makes 750k text lookups while its merges are read;
// std::unordered_map's separate nodes make that several times slower than flat arrays.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace ember::tokenizer {

inline uint64_t hash_text(std::string_view s) {
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
    for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

inline size_t table_capacity(size_t n) {
    size_t capacity = 16;
    while (capacity < n * 2) capacity *= 2;  // at most half full
    return capacity;
}

// Text -> id over texts stored elsewhere (`text_of(id)` gives them back for comparison).
class TextIndex {
public:
    template <typename TextOf>
    void build(int32_t n, TextOf&& text_of) {
        slots_.assign(table_capacity(static_cast<size_t>(n)), Slot{0, -1});
        mask_ = slots_.size() - 1;
        for (int32_t id = 0; id < n; ++id) {
            const std::string_view text = text_of(id);
            const uint64_t h = hash_text(text);
            for (size_t i = h & mask_;; i = (i + 1) & mask_) {
                Slot& slot = slots_[i];
                if (slot.id < 0) {
                    slot = {static_cast<uint32_t>(h), id};
                    break;
                }
                if (slot.hash == static_cast<uint32_t>(h) && text_of(slot.id) == text) break;  // first id wins
            }
        }
    }

    template <typename TextOf>
    std::optional<int32_t> find(std::string_view text, TextOf&& text_of) const {
        if (slots_.empty()) return std::nullopt;
        const uint64_t h = hash_text(text);
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            const Slot& slot = slots_[i];
            if (slot.id < 0) return std::nullopt;
            if (slot.hash == static_cast<uint32_t>(h) && text_of(slot.id) == text) return slot.id;
        }
    }

private:
    struct Slot {
        uint32_t hash;
        int32_t id;  // -1: empty
    };
    std::vector<Slot> slots_;
    size_t mask_ = 0;
};

// (left id, right id) -> (rank, merged id).
class MergeTable {
public:
    struct Merge {
        int32_t rank;
        int32_t result;
    };

    void reserve(size_t n) {
        slots_.assign(table_capacity(n), Slot{kEmpty, {0, 0}});
        mask_ = slots_.size() - 1;
    }
    size_t size() const { return size_; }

    // A repeated pair takes the new value.
    void insert_or_assign(uint64_t key, Merge merge) {
        if ((size_ + 1) * 2 > slots_.size()) grow();
        for (size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
            Slot& slot = slots_[i];
            if (slot.key == kEmpty) {
                slot = {key, merge};
                ++size_;
                return;
            }
            if (slot.key == key) {
                slot.merge = merge;
                return;
            }
        }
    }

    const Merge* find(uint64_t key) const {
        for (size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
            const Slot& slot = slots_[i];
            if (slot.key == key) return &slot.merge;
            if (slot.key == kEmpty) return nullptr;
        }
    }

private:
    static constexpr uint64_t kEmpty = ~0ull;  // ids are below 2^31, so no pair key has every bit set
    struct Slot {
        uint64_t key;
        Merge merge;
    };
    static uint64_t mix(uint64_t k) {
        k ^= k >> 33;
        k *= 0xff51afd7ed558ccdull;
        return k ^ (k >> 33);
    }
    void grow() {
        std::vector<Slot> old = std::move(slots_);
        reserve(old.empty() ? 8 : old.size());
        size_ = 0;
        for (const Slot& s : old)
            if (s.key != kEmpty) insert_or_assign(s.key, s.merge);
    }

    std::vector<Slot> slots_;
    size_t mask_ = 0;
    size_t size_ = 0;
};

}  // namespace ember::tokenizer
