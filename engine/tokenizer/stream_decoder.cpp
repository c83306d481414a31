// SPDX-License-Identifier: MIT
// Decoding a token stream to text that never splits a UTF-8 character.
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/utf8.h"

namespace ember {

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer, bool special) : tokenizer_(tokenizer), special_(special) {}

std::string StreamDecoder::push(int32_t id) {
    tokenizer_.impl().append_piece(id, special_, at_text_start_, pending_);
    // Emit everything up to a trailing sequence that may still be completed by the next token; replace what can
    // never become valid.
    std::string out;
    size_t i = 0;
    while (i < pending_.size()) {
        const tokenizer::Utf8Scan scan = tokenizer::scan_utf8(pending_, i);
        if (scan.status == tokenizer::Utf8Status::truncated) break;
        if (scan.status == tokenizer::Utf8Status::valid) {
            out.append(pending_, i, scan.length);
        } else {
            out.append("\xEF\xBF\xBD");
        }
        i += scan.length;
    }
    pending_.erase(0, i);
    return out;
}

std::string StreamDecoder::flush() {
    std::string out;
    tokenizer::append_replacing_invalid(pending_, out);
    pending_.clear();
    return out;
}

}  // namespace ember
