// SPDX-License-Identifier: MIT
// GPT-2's byte-to-character alphabet and its inverse.
#include "tokenizer/byte_level.h"

#include <array>

#include "tokenizer/utf8.h"

namespace ember::tokenizer {

namespace {

constexpr bool stands_for_itself(unsigned b) {
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

constexpr std::array<char32_t, 256> make_byte_table() {
    std::array<char32_t, 256> table{};
    char32_t next = 0x100;
    for (unsigned b = 0; b < 256; ++b) table[b] = stands_for_itself(b) ? static_cast<char32_t>(b) : next++;
    return table;
}

constexpr std::array<char32_t, 256> kByteToCodepoint = make_byte_table();

// The alphabet covers U+0021..U+0143; -1 where a code point is not in it.
constexpr char32_t kAlphabetEnd = 0x144;
constexpr std::array<int16_t, kAlphabetEnd> make_reverse_table() {
    std::array<int16_t, kAlphabetEnd> table{};
    for (auto& v : table) v = -1;
    for (unsigned b = 0; b < 256; ++b) table[kByteToCodepoint[b]] = static_cast<int16_t>(b);
    return table;
}

constexpr std::array<int16_t, kAlphabetEnd> kCodepointToByte = make_reverse_table();

}  // namespace

char32_t byte_to_codepoint(uint8_t byte) {
    return kByteToCodepoint[byte];
}

std::optional<uint8_t> codepoint_to_byte(char32_t cp) {
    if (cp >= kAlphabetEnd || kCodepointToByte[cp] < 0) return std::nullopt;
    return static_cast<uint8_t>(kCodepointToByte[cp]);
}

std::string bytes_to_byte_level(std::string_view raw) {
    std::string out;
    out.reserve(raw.size() * 2);
    for (const char c : raw) append_utf8(kByteToCodepoint[static_cast<uint8_t>(c)], out);
    return out;
}

std::string byte_level_to_bytes(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const Utf8Scan scan = scan_utf8(text, i);
        if (scan.status != Utf8Status::valid) {
            out.append(text.substr(i, scan.length));
            i += scan.length;
            continue;
        }
        const auto* p = reinterpret_cast<const unsigned char*>(text.data() + i);
        char32_t cp = 0;
        switch (scan.length) {
            case 1:
                cp = p[0];
                break;
            case 2:
                cp = ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu);
                break;
            default:
                cp = kAlphabetEnd;
                break;  // three- and four-byte characters are never in the alphabet
        }
        if (const auto byte = codepoint_to_byte(cp)) {
            out += static_cast<char>(*byte);
        } else {
            out.append(text.substr(i, scan.length));
        }
        i += scan.length;
    }
    return out;
}

}  // namespace ember::tokenizer
