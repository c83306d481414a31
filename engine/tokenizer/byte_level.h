// SPDX-License-Identifier: MIT
// GPT-2's byte-level alphabet: every byte is shown as one printable character, so that byte-level BPE vocabularies
// can store any byte sequence as text. Printable Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for themselves;
// the other 68 bytes take U+0100 onwards in byte order (a space is 'Ġ', a newline 'Ċ').
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ember::tokenizer {

char32_t byte_to_codepoint(uint8_t byte);
std::optional<uint8_t> codepoint_to_byte(char32_t cp);

// Raw bytes to their byte-level text (UTF-8).
std::string bytes_to_byte_level(std::string_view raw);
// Byte-level text back to raw bytes. Characters outside the alphabet (and invalid UTF-8) pass through unchanged,
// as the Hugging Face ByteLevel decoder does.
std::string byte_level_to_bytes(std::string_view text);

}  // namespace ember::tokenizer
