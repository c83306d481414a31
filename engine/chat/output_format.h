// SPDX-License-Identifier: MIT
// The output formats behind chat::OutputParser (tagged_parser.cpp, harmony_parser.cpp) and the hold-back rule
// they share: streamed text is emitted as soon as it can no longer be part of a tag or of a UTF-8 character.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "ember/chat.h"

namespace ember::chat {

class OutputParser::Format {
public:
    virtual ~Format() = default;
    virtual void push(std::string_view chunk, ParsedDelta& out) = 0;
    virtual void finish(ParsedDelta& out) = 0;
};

// The formats hold back what may still turn out to be part of a tag: push appends the chunk to pending_ and drains
// what can be emitted, finish drains the rest.
class BufferedFormat : public OutputParser::Format {
public:
    void push(std::string_view chunk, ParsedDelta& out) final {
        pending_.append(chunk);
        drain(out, false);
    }
    void finish(ParsedDelta& out) final { drain(out, true); }

protected:
    virtual void drain(ParsedDelta& out, bool at_end) = 0;
    std::string pending_;  // text not yet emitted
};

std::unique_ptr<OutputParser::Format> make_tagged_format(const ParserOptions& options);
std::unique_ptr<OutputParser::Format> make_harmony_format();

// The length of the longest suffix of `s` that is a proper prefix of one of `tags`.
size_t tag_prefix_length(std::string_view s, std::span<const std::string_view> tags);

// The length of the suffix of `s` that is an incomplete UTF-8 character (0 when `s` ends on a whole one).
size_t incomplete_utf8_length(std::string_view s);

}  // namespace ember::chat
