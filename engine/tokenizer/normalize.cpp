// SPDX-License-Identifier: MIT
// Unicode normalization (ICU) for tokenizers that declare one.
#include "tokenizer/normalize.h"

#include <cstdint>

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>

#include "ember/error.h"

namespace ember::tokenizer {

std::string to_nfc(std::string_view text) {
    bool ascii = true;
    for (const char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
    if (ascii) return std::string(text);
    if (text.size() > static_cast<size_t>(INT32_MAX))
        throw Error("tokenizer: text of " + std::to_string(text.size()) + " bytes is too large to normalize");

    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(status);
    if (U_FAILURE(status)) throw Error(std::string("tokenizer: ICU has no NFC normalizer: ") + u_errorName(status));
    const icu::StringPiece source(text.data(), static_cast<int32_t>(text.size()));
    if (nfc->isNormalizedUTF8(source, status) && U_SUCCESS(status)) return std::string(text);
    status = U_ZERO_ERROR;
    std::string out;
    out.reserve(text.size());
    icu::StringByteSink<std::string> sink(&out);
    nfc->normalizeUTF8(0, source, sink, nullptr, status);
    if (U_FAILURE(status)) throw Error(std::string("tokenizer: NFC normalization failed: ") + u_errorName(status));
    return out;
}

}  // namespace ember::tokenizer
