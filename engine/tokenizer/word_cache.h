// SPDX-License-Identifier: MIT
// A bounded cache of the BPE result of each word (pre-tokenizer piece), shared by concurrent encode calls.
#pragma once

#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ember::tokenizer {

class WordCache {
public:
    // Words longer than max_word_bytes are not cached; when max_entries is reached the cache starts afresh.
    WordCache(size_t max_entries, size_t max_word_bytes) : max_entries_(max_entries), max_word_bytes_(max_word_bytes) {}

    // Appends the cached ids of `word` to `out`; false when it is not cached.
    bool lookup(std::string_view word, std::vector<int32_t>& out) const {
        if (word.size() > max_word_bytes_) return false;
        std::shared_lock lock(mutex_);
        const auto it = map_.find(word);
        if (it == map_.end()) return false;
        out.insert(out.end(), it->second.begin(), it->second.end());
        return true;
    }

    void store(std::string_view word, std::span<const int32_t> ids) {
        if (word.size() > max_word_bytes_) return;
        std::unique_lock lock(mutex_);
        if (map_.size() >= max_entries_) map_.clear();
        map_.try_emplace(std::string(word), ids.begin(), ids.end());
    }

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    size_t max_entries_;
    size_t max_word_bytes_;
    mutable std::shared_mutex mutex_;
    std::unordered_map<std::string, std::vector<int32_t>, Hash, std::equal_to<>> map_;
};

}  // namespace ember::tokenizer
