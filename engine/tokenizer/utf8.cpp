// SPDX-License-Identifier: MIT
#include "tokenizer/utf8.h"

namespace ember::tokenizer {

namespace {

bool is_continuation(unsigned char b) {
    return (b & 0xC0) == 0x80;
}

}  // namespace

Utf8Scan scan_utf8(std::string_view s, size_t i) {
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
        const bool ok = k == 1 ? (b >= lo && b <= hi) : is_continuation(b);
        if (!ok) return {Utf8Status::invalid, k};
    }
    return {Utf8Status::valid, need};
}

bool is_valid_utf8(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        const Utf8Scan scan = scan_utf8(s, i);
        if (scan.status != Utf8Status::valid) return false;
        i += scan.length;
    }
    return true;
}

void append_utf8(char32_t cp, std::string& out) {
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

void append_replacing_invalid(std::string_view s, std::string& out) {
    for_each_utf8_run(
        s, [&](std::string_view run) { out.append(run); }, [&](std::string_view) { out.append("\xEF\xBF\xBD"); });
}

}  // namespace ember::tokenizer
