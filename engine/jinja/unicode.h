// SPDX-License-Identifier: MIT
// UTF-8 and the few Unicode properties the Jinja interpreter needs to behave like Python's str: code point
// iteration, whitespace (str.isspace), simple case mapping, and printability (repr).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ember::chat::unicode {

// Decodes the code point at s[i] and advances i. Invalid input yields U+FFFD and advances one byte.
char32_t next(std::string_view s, size_t& i);
void append(std::string& out, char32_t cp);
// The first invalid byte offset, or npos when s is valid UTF-8 (no surrogates, no overlongs).
size_t find_invalid(std::string_view s);
// Python's escape of a code point in repr and string literals: \xNN, \uNNNN or \UNNNNNNNN.
void append_escape(std::string& out, char32_t cp);
bool is_ascii(std::string_view s);
size_t length(std::string_view s);  // in code points
// Byte offsets of each code point start, plus s.size() at the end.
std::vector<size_t> boundaries(std::string_view s);

bool is_space(char32_t c);      // Python str.isspace
bool is_linebreak(char32_t c);  // Python str.splitlines boundaries (\r\n is handled by the caller)
bool is_printable(char32_t c);  // Python str.isprintable, approximated for unassigned code points
bool is_alpha(char32_t c);
bool is_digit(char32_t c);
bool is_lower(char32_t c);
bool is_upper(char32_t c);
bool is_cased(char32_t c);
char32_t to_lower(char32_t c);
char32_t to_upper(char32_t c);

std::string lower(std::string_view s);
std::string upper(std::string_view s);

// s with each code point c replaced by map(c); map sees the code points in order, so it may keep state.
template <typename Map>
std::string map_code_points(std::string_view s, Map&& map) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) append(out, map(next(s, i)));
    return out;
}

}  // namespace ember::chat::unicode
