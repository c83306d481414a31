// SPDX-License-Identifier: MIT
// Values by name in insertion order, found in constant time.
#include "jinja/named_values.h"

namespace ember::chat::jinja {

namespace {
constexpr size_t index_threshold = 16;
}

size_t NamedValues::position(std::string_view name) const {
    if (!index_.empty()) {
        const auto it = index_.find(name);
        return it == index_.end() ? npos : it->second;
    }
    for (size_t i = 0; i < entries_.size(); ++i)
        if (entries_[i].first == name) return i;
    return npos;
}

const Value* NamedValues::find(std::string_view name) const {
    const size_t at = position(name);
    return at == npos ? nullptr : &entries_[at].second;
}

void NamedValues::set(std::string_view name, Value value) {
    if (const size_t at = position(name); at != npos) {
        entries_[at].second = std::move(value);
        return;
    }
    entries_.emplace_back(std::string(name), std::move(value));
    if (!index_.empty()) {
        index_.emplace(entries_.back().first, entries_.size() - 1);
    } else if (entries_.size() > index_threshold) {
        for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first, i);
    }
}

void NamedValues::release_into(std::vector<Value>& out) {
    for (auto& entry : entries_) out.push_back(std::move(entry.second));
    entries_.clear();
    index_.clear();
}

}  // namespace ember::chat::jinja
