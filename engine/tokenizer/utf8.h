// SPDX-License-Identifier: MIT
// UTF-8 scanning for the tokenizer: where text is valid, where a sequence is cut off at the end of a buffer, and
// U+FFFD replacement of what can never become valid (one U+FFFD per maximal invalid subpart, as Unicode and
// Python's errors="replace" do).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "tokenizer/utf8_codec.h"

namespace ember::tokenizer {

bool is_valid_utf8(std::string_view s);

// Bytes of a character starting with `lead`, for stepping through text already known to be valid.
inline size_t utf8_length(unsigned char lead) {
    return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

// Appends `s` to `out` with each invalid subpart (a truncated tail included) replaced by U+FFFD.
void append_replacing_invalid(std::string_view s, std::string& out);

// Calls on_valid(run) for each maximal run of valid UTF-8 and on_invalid(bytes) for each invalid subpart, in order.
template <typename OnValid, typename OnInvalid>
void for_each_utf8_run(std::string_view s, OnValid&& on_valid, OnInvalid&& on_invalid) {
    size_t run_start = 0;
    size_t i = 0;
    while (i < s.size()) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            ++i;
            continue;
        }
        const Utf8Scan scan = scan_utf8(s, i);
        if (scan.status == Utf8Status::valid) {
            i += scan.length;
            continue;
        }
        if (i > run_start) on_valid(s.substr(run_start, i - run_start));
        on_invalid(s.substr(i, scan.length));
        i += scan.length;
        run_start = i;
    }
    if (i > run_start) on_valid(s.substr(run_start, i - run_start));
}

}  // namespace ember::tokenizer
