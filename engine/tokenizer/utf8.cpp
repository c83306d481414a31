// SPDX-License-Identifier: MIT
// Whole-string UTF-8: validity and U+FFFD replacement.
#include "tokenizer/utf8.h"

namespace ember::tokenizer {

bool is_valid_utf8(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        const Utf8Scan scan = scan_utf8(s, i);
        if (scan.status != Utf8Status::valid) return false;
        i += scan.length;
    }
    return true;
}

void append_replacing_invalid(std::string_view s, std::string& out) {
    for_each_utf8_run(
        s, [&](std::string_view run) { out.append(run); }, [&](std::string_view) { out.append("\xEF\xBF\xBD"); });
}

}  // namespace ember::tokenizer
