// SPDX-License-Identifier: MIT
// One UTF-8 sequence at a time: where it ends or why it is bad, its code point, and a code point's bytes. Header-only,
// so that engine/jinja decodes and encodes with the same code without linking the tokenizer.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ember::tokenizer {

enum class Utf8Status { valid, invalid, truncated };

struct Utf8Scan {
    Utf8Status status;
    size_t length;  // valid: the sequence; invalid: the maximal subpart to replace; truncated: the bytes left
};

// The sequence starting at s[i] (i < s.size()).
inline Utf8Scan scan_utf8(std::string_view s, size_t i) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char lead = byte(i);
    if (lead < 0x80) return {Utf8Status::valid, 1};
    size_t need;
    // The allowed range of the second byte excludes overlong forms, surrogates and code points above U+10FFFF.
    unsigned char lo = 0x80, hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        need = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        need = 3;
        if (lead == 0xE0) lo = 0xA0;
        if (lead == 0xED) hi = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        need = 4;
        if (lead == 0xF0) lo = 0x90;
        if (lead == 0xF4) hi = 0x8F;
    } else {
        return {Utf8Status::invalid, 1};
    }
    size_t k = 1;
    for (; k < need; ++k) {
        if (i + k >= s.size()) return {Utf8Status::truncated, k};
        const unsigned char b = byte(i + k);
        const bool ok = k == 1 ? (b >= lo && b <= hi) : (b & 0xC0) == 0x80;
        if (!ok) return {Utf8Status::invalid, k};
    }
    return {Utf8Status::valid, need};
}

// The code point of the valid sequence of `length` bytes at s[i] (as scan_utf8 found it).
inline char32_t decode_utf8(std::string_view s, size_t i, size_t length) {
    static constexpr unsigned char kLeadBits[5] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    char32_t cp = static_cast<unsigned char>(s[i]) & kLeadBits[length];
    for (size_t k = 1; k < length; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    return cp;
}

inline void append_utf8(char32_t cp, std::string& out) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

}  // namespace ember::tokenizer
