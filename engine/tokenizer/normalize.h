// SPDX-License-Identifier: MIT
// Unicode normalization for tokenizers whose tokenizer.json has a normalizer (Qwen2's NFC), done by ICU rather
// than by tables of our own.
#pragma once

#include <string>
#include <string_view>

namespace ember::tokenizer {

// NFC of valid UTF-8 text. ASCII text is returned as is without calling ICU.
std::string to_nfc(std::string_view text);

}  // namespace ember::tokenizer
