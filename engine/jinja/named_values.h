// SPDX-License-Identifier: MIT
// Values by name in insertion order (a scope's variables, a namespace's attributes), found in constant time: a
// template of a hundred thousand {% set %} statements must not turn every assignment into a scan.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "jinja/jinja_value.h"

namespace ember::chat::jinja {

class NamedValues {
public:
    using Entry = std::pair<std::string, Value>;

    const Value* find(std::string_view name) const;
    void set(std::string_view name, Value value);

    size_t size() const { return entries_.size(); }
    const Entry& operator[](size_t i) const { return entries_[i]; }
    auto begin() const { return entries_.begin(); }
    auto end() const { return entries_.end(); }
    // Moves every value into `out` and empties the table (iterative release of nested values).
    void release_into(std::vector<Value>& out);

private:
    struct NameHash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    static constexpr size_t npos = SIZE_MAX;
    size_t position(std::string_view name) const;

    std::vector<Entry> entries_;
    // Built once the table holds more than a few names; small tables, the common case, are scanned.
    std::unordered_map<std::string, size_t, NameHash, std::equal_to<>> index_;
};

}  // namespace ember::chat::jinja
