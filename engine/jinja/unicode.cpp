// SPDX-License-Identifier: MIT
// The Jinja interpreter's view of Unicode: code points, escapes, case and character classes.
#include "jinja/unicode.h"

#include <cstdio>
#include <locale.h>
#include <wctype.h>

#include "tokenizer/utf8_codec.h"

namespace ember::chat::unicode {

namespace {

// glibc's built-in C.UTF-8 locale carries Unicode's simple case mappings and character classes. It is created
// once and never changed; where it is missing, only ASCII is mapped.
locale_t utf8_locale() {
    static const locale_t locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
    return locale;
}

bool in(char32_t c, char32_t lo, char32_t hi) {
    return c >= lo && c <= hi;
}

}  // namespace

char32_t next(std::string_view s, size_t& i) {
    const tokenizer::Utf8Scan scan = tokenizer::scan_utf8(s, i);
    if (scan.status != tokenizer::Utf8Status::valid) {
        ++i;
        return 0xFFFD;
    }
    const char32_t cp = tokenizer::decode_utf8(s, i, scan.length);
    i += scan.length;
    return cp;
}

void append(std::string& out, char32_t cp) { tokenizer::append_utf8(cp, out); }

size_t find_invalid(std::string_view s) {
    size_t i = 0;
    while (i < s.size()) {
        const size_t at = i;
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            ++i;
            continue;
        }
        const char32_t cp = next(s, i);
        // A genuine U+FFFD is three bytes long; a replacement for a bad byte consumed one.
        if (cp == 0xFFFD && i - at != 3) return at;
    }
    return std::string_view::npos;
}

void append_escape(std::string& out, char32_t cp) {
    char buf[16];
    if (cp <= 0xFF)
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
    else if (cp <= 0xFFFF)
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
    else
        std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(cp));
    out += buf;
}

bool is_ascii(std::string_view s) {
    for (char c : s)
        if (static_cast<unsigned char>(c) >= 0x80) return false;
    return true;
}

size_t length(std::string_view s) {
    size_t n = 0;
    for (char c : s)
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
    return n;
}

std::vector<size_t> boundaries(std::string_view s) {
    std::vector<size_t> out;
    out.reserve(s.size() + 1);
    for (size_t i = 0; i < s.size(); ++i)
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) out.push_back(i);
    out.push_back(s.size());
    return out;
}

bool is_space(char32_t c) {
    return in(c, 0x09, 0x0D) || in(c, 0x1C, 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 || in(c, 0x2000, 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_linebreak(char32_t c) {
    return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || in(c, 0x1C, 0x1E) || c == 0x85 || c == 0x2028 ||
           c == 0x2029;
}

bool is_printable(char32_t c) {
    if (c == ' ') return true;
    if (c < 0x20 || in(c, 0x7F, 0xA0)) return false;  // Cc and U+00A0 (Zs)
    if (c == 0xAD || in(c, 0x600, 0x605) || c == 0x61C || c == 0x6DD || c == 0x70F || in(c, 0x890, 0x891) ||
        c == 0x8E2 || c == 0x1680 || c == 0x180E || in(c, 0x2000, 0x200F) || in(c, 0x2028, 0x202F) ||
        in(c, 0x205F, 0x2064) || in(c, 0x2066, 0x206F) || c == 0x3000 || c == 0xFEFF || in(c, 0xFFF9, 0xFFFB))
        return false;                                                                            // Cf, Zs, Zl, Zp
    if (in(c, 0xD800, 0xF8FF) || in(c, 0xFDD0, 0xFDEF) || (c & 0xFFFE) == 0xFFFE) return false;  // Cs, Co, Cn
    if (c == 0x110BD || c == 0x110CD || in(c, 0x13430, 0x1343F) || in(c, 0x1BCA0, 0x1BCA3) || in(c, 0x1D173, 0x1D17A) ||
        c == 0xE0001 || in(c, 0xE0020, 0xE007F) || c >= 0xF0000)
        return false;
    return true;
}

bool is_alpha(char32_t c) {
    if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
    const locale_t l = utf8_locale();
    return l && iswalpha_l(static_cast<wint_t>(c), l);
}

bool is_digit(char32_t c) {
    if (c < 0x80) return c >= '0' && c <= '9';
    const locale_t l = utf8_locale();
    return l && iswdigit_l(static_cast<wint_t>(c), l);
}

char32_t to_lower(char32_t c) {
    if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
    const locale_t l = utf8_locale();
    return l ? static_cast<char32_t>(towlower_l(static_cast<wint_t>(c), l)) : c;
}

char32_t to_upper(char32_t c) {
    if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
    const locale_t l = utf8_locale();
    return l ? static_cast<char32_t>(towupper_l(static_cast<wint_t>(c), l)) : c;
}

bool is_lower(char32_t c) {
    return to_upper(c) != c;
}
bool is_upper(char32_t c) {
    return to_lower(c) != c;
}
bool is_cased(char32_t c) {
    return is_lower(c) || is_upper(c);
}

std::string lower(std::string_view s) { return map_code_points(s, to_lower); }

std::string upper(std::string_view s) { return map_code_points(s, to_upper); }

}  // namespace ember::chat::unicode
