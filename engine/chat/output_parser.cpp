// SPDX-License-Identifier: MIT
// The streaming split of model output into reasoning, content and tool calls: the choice of format for a
// template, and the hold-back rule the formats share.
#include <algorithm>

#include "chat/output_format.h"

namespace ember::chat {

OutputParser::OutputParser(ParserOptions options)
    : format_(options.format == OutputFormat::harmony ? make_harmony_format() : make_tagged_format(options)) {}
OutputParser::OutputParser(OutputParser&&) noexcept = default;
OutputParser& OutputParser::operator=(OutputParser&&) noexcept = default;
OutputParser::~OutputParser() = default;

ParsedDelta OutputParser::push(std::string_view chunk) {
    ParsedDelta out;
    format_->push(chunk, out);
    return out;
}

ParsedDelta OutputParser::finish() {
    ParsedDelta out;
    format_->finish(out);
    return out;
}

size_t tag_prefix_length(std::string_view s, std::span<const std::string_view> tags) {
    size_t keep = 0;
    for (std::string_view tag : tags) {
        for (size_t n = std::min(tag.size() - 1, s.size()); n > keep; --n) {
            if (s.substr(s.size() - n) == tag.substr(0, n)) {
                keep = n;
                break;
            }
        }
    }
    return keep;
}

size_t incomplete_utf8_length(std::string_view s) {
    size_t i = s.size(), continuation = 0;
    while (i > 0 && continuation < 3 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) --i, ++continuation;
    if (i == 0) return 0;
    const unsigned char lead = static_cast<unsigned char>(s[i - 1]);
    const size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    return continuation + 1 < need ? continuation + 1 : 0;
}

ParserOptions parser_options_for(const Template& tmpl, std::string_view prompt) {
    ParserOptions options;
    // Only harmony templates write this header token; their generation prompt ends before the model's channel.
    if (tmpl.source().find("<|channel|>") != std::string::npos) {
        options.format = OutputFormat::harmony;
        return options;
    }
    options.starts_in_reasoning = prompt_opens_reasoning(prompt, options);
    return options;
}

bool prompt_opens_reasoning(std::string_view prompt, const ParserOptions& options) {
    if (options.think_open.empty()) return false;
    size_t end = prompt.size();
    while (end > 0 &&
           (prompt[end - 1] == ' ' || prompt[end - 1] == '\n' || prompt[end - 1] == '\r' || prompt[end - 1] == '\t'))
        --end;
    return prompt.substr(0, end).ends_with(options.think_open);
}

}  // namespace ember::chat
