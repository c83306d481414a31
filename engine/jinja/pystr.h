// SPDX-License-Identifier: MIT
// Python's str methods on UTF-8 strings, indexed by code point as Python indexes them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ember::chat::pystr {

// chars: the set of code points to strip; nullopt strips whitespace.
std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right);
// sep nullopt: runs of whitespace. maxsplit < 0: no limit. Throws on an empty separator.
std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit);
std::vector<std::string> rsplit(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit);
std::vector<std::string> splitlines(std::string_view s, bool keepends);
std::string replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count);
// Code point slice [start, end) with Python's index clamping.
std::string slice(std::string_view s, std::optional<int64_t> start, std::optional<int64_t> end);
// Code point index of sub inside s[start:end], or -1. `reverse`: the last occurrence.
int64_t find(std::string_view s, std::string_view sub, std::optional<int64_t> start, std::optional<int64_t> end,
             bool reverse);
int64_t count(std::string_view s, std::string_view sub);

std::string capitalize(std::string_view s);
std::string title(std::string_view s);  // str.title
std::string swapcase(std::string_view s);
bool is_lower(std::string_view s);
bool is_upper(std::string_view s);
bool all_of(std::string_view s, bool (*pred)(char32_t));  // and non-empty

}  // namespace ember::chat::pystr
