// SPDX-License-Identifier: MIT
// Python's str methods on UTF-8 strings, indexed by code point.
#include "jinja/pystr.h"

#include <algorithm>

#include "jinja/budget.h"
#include "jinja/unicode.h"

namespace ember::chat::pystr {

namespace {

std::vector<char32_t> decode(std::string_view s) {
    std::vector<char32_t> out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) out.push_back(unicode::next(s, i));
    return out;
}

// Byte offset of code point index `cp` (clamped to the string).
size_t byte_offset(std::string_view s, int64_t cp) {
    if (cp <= 0) return 0;
    size_t i = 0;
    for (int64_t k = 0; k < cp && i < s.size(); ++k) unicode::next(s, i);
    return i;
}

// Python's clamping of slice bounds for a string of n code points.
int64_t clamp_index(std::optional<int64_t> i, int64_t n, int64_t fallback) {
    if (!i) return fallback;
    int64_t v = *i;
    if (v < 0) v = std::max<int64_t>(0, v + n);
    return std::min(v, n);
}

}  // namespace

std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right) {
    std::vector<char32_t> set;
    if (chars) set = decode(*chars);
    auto strippable = [&](char32_t c) {
        return chars ? std::find(set.begin(), set.end(), c) != set.end() : unicode::is_space(c);
    };
    size_t begin = 0, end = s.size();
    if (left) {
        while (begin < end) {
            size_t j = begin;
            if (!strippable(unicode::next(s, j))) break;
            begin = j;
        }
    }
    if (right) {
        // Backwards, one code point at a time (strings inside the interpreter are valid UTF-8).
        while (end > begin) {
            size_t start = end - 1;
            while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
            size_t i = start;
            const char32_t c = unicode::next(s, i);
            if (i != end || !strippable(c)) break;
            end = start;
        }
    }
    return std::string(s.substr(begin, end - begin));
}

std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit) {
    std::vector<std::string> out;
    if (sep) {
        if (sep->empty()) jinja::fail("empty separator");
        size_t pos = 0;
        while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
            const size_t hit = s.find(*sep, pos);
            if (hit == std::string_view::npos) break;
            out.emplace_back(s.substr(pos, hit - pos));
            pos = hit + sep->size();
        }
        out.emplace_back(s.substr(pos));
        return out;
    }
    size_t i = 0;
    auto skip_space = [&] {
        while (i < s.size()) {
            size_t j = i;
            if (!unicode::is_space(unicode::next(s, j))) break;
            i = j;
        }
    };
    skip_space();
    while (i < s.size()) {
        if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
            out.emplace_back(s.substr(i));  // the rest, as it is
            return out;
        }
        const size_t start = i;
        while (i < s.size()) {
            size_t j = i;
            if (unicode::is_space(unicode::next(s, j))) break;
            i = j;
        }
        out.emplace_back(s.substr(start, i - start));
        skip_space();
    }
    return out;
}

std::vector<std::string> rsplit(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit) {
    if (maxsplit < 0) return split(s, sep, maxsplit);
    std::vector<std::string> out;
    if (sep) {
        if (sep->empty()) jinja::fail("empty separator");
        size_t end = s.size();
        while (static_cast<int64_t>(out.size()) < maxsplit) {
            if (end < sep->size()) break;
            const size_t hit = s.rfind(*sep, end - sep->size());
            if (hit == std::string_view::npos) break;
            out.emplace_back(s.substr(hit + sep->size(), end - hit - sep->size()));
            end = hit;
        }
        out.emplace_back(s.substr(0, end));
        std::reverse(out.begin(), out.end());
        return out;
    }
    // Whitespace: split all, then rejoin the leading parts with their original separators.
    const std::vector<char32_t> cps = decode(s);
    std::vector<std::pair<size_t, size_t>> words;  // code point ranges
    for (size_t i = 0; i < cps.size();) {
        while (i < cps.size() && unicode::is_space(cps[i])) ++i;
        if (i >= cps.size()) break;
        const size_t start = i;
        while (i < cps.size() && !unicode::is_space(cps[i])) ++i;
        words.emplace_back(start, i);
    }
    auto text = [&](size_t a, size_t b) {
        std::string r;
        for (size_t k = a; k < b; ++k) unicode::append(r, cps[k]);
        return r;
    };
    if (words.empty()) return out;
    const size_t keep = static_cast<size_t>(std::min<int64_t>(maxsplit, static_cast<int64_t>(words.size()) - 1));
    const size_t head_words = words.size() - keep;
    out.push_back(text(0, words[head_words - 1].second));
    for (size_t w = head_words; w < words.size(); ++w) out.push_back(text(words[w].first, words[w].second));
    return out;
}

std::vector<std::string> splitlines(std::string_view s, bool keepends) {
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t i = 0; i < s.size();) {
        const size_t at = i;
        const char32_t c = unicode::next(s, i);
        if (!unicode::is_linebreak(c)) continue;
        if (c == '\r' && i < s.size() && s[i] == '\n') ++i;
        out.emplace_back(s.substr(start, (keepends ? i : at) - start));
        start = i;
    }
    if (start < s.size()) out.emplace_back(s.substr(start));
    return out;
}

std::string replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count) {
    std::string out;
    if (old.empty()) {
        // Python inserts the replacement before every code point and at the end.
        int64_t done = 0;
        size_t i = 0;
        while (i < s.size()) {
            if (count < 0 || done < count) {
                out += repl;
                ++done;
            }
            const size_t start = i;
            unicode::next(s, i);
            out.append(s.substr(start, i - start));
        }
        if (count < 0 || done < count) out += repl;
        return out;
    }
    size_t pos = 0;
    int64_t done = 0;
    while (count < 0 || done < count) {
        const size_t hit = s.find(old, pos);
        if (hit == std::string_view::npos) break;
        out.append(s.substr(pos, hit - pos));
        out.append(repl);
        pos = hit + old.size();
        ++done;
    }
    out.append(s.substr(pos));
    return out;
}

std::string slice(std::string_view s, std::optional<int64_t> start, std::optional<int64_t> end) {
    const int64_t n = static_cast<int64_t>(unicode::length(s));
    const int64_t a = clamp_index(start, n, 0), b = clamp_index(end, n, n);
    if (b <= a) return {};
    const size_t from = byte_offset(s, a);
    const size_t to = from + byte_offset(s.substr(from), b - a);
    return std::string(s.substr(from, to - from));
}

int64_t find(std::string_view s, std::string_view sub, std::optional<int64_t> start, std::optional<int64_t> end,
             bool reverse) {
    const int64_t n = static_cast<int64_t>(unicode::length(s));
    const int64_t a = clamp_index(start, n, 0), b = clamp_index(end, n, n);
    if (b < a) return -1;
    const size_t from = byte_offset(s, a);
    const std::string_view window = s.substr(from, byte_offset(s.substr(from), b - a));
    const size_t hit = reverse ? window.rfind(sub) : window.find(sub);
    if (hit == std::string_view::npos) return -1;
    return a + static_cast<int64_t>(unicode::length(window.substr(0, hit)));
}

int64_t count(std::string_view s, std::string_view sub) {
    if (sub.empty()) return static_cast<int64_t>(unicode::length(s)) + 1;
    int64_t n = 0;
    for (size_t pos = s.find(sub); pos != std::string_view::npos; pos = s.find(sub, pos + sub.size())) ++n;
    return n;
}

std::string capitalize(std::string_view s) {
    bool first = true;
    return unicode::map_code_points(s, [&](char32_t c) {
        const char32_t mapped = first ? unicode::to_upper(c) : unicode::to_lower(c);
        first = false;
        return mapped;
    });
}

std::string title(std::string_view s) {
    bool previous_cased = false;
    return unicode::map_code_points(s, [&](char32_t c) {
        const char32_t mapped = previous_cased ? unicode::to_lower(c) : unicode::to_upper(c);
        previous_cased = unicode::is_cased(c);
        return mapped;
    });
}

std::string swapcase(std::string_view s) {
    return unicode::map_code_points(
        s, [](char32_t c) { return unicode::is_upper(c) ? unicode::to_lower(c) : unicode::to_upper(c); });
}

namespace {

// str.islower / str.isupper: at least one character of the case `wanted` and none of the case `other`.
bool cased_only_as(std::string_view s, bool (*wanted)(char32_t), bool (*other)(char32_t)) {
    bool cased = false;
    for (size_t i = 0; i < s.size();) {
        const char32_t c = unicode::next(s, i);
        if (other(c)) return false;
        if (wanted(c)) cased = true;
    }
    return cased;
}

}  // namespace

bool is_lower(std::string_view s) { return cased_only_as(s, unicode::is_lower, unicode::is_upper); }

bool is_upper(std::string_view s) { return cased_only_as(s, unicode::is_upper, unicode::is_lower); }

bool all_of(std::string_view s, bool (*pred)(char32_t)) {
    if (s.empty()) return false;
    for (size_t i = 0; i < s.size();)
        if (!pred(unicode::next(s, i))) return false;
    return true;
}

}  // namespace ember::chat::pystr
