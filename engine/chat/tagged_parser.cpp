// SPDX-License-Identifier: MIT
// The tagged output format: reasoning in <think>...</think>, tool calls in <tool_call>...</tool_call>, the rest
// content. Whitespace around the think and tool-call tags is dropped (it belongs to the format, as the templates
// write it), so that reasoning and content come out as the templates expect them back.
#include <algorithm>
#include <string>
#include <vector>

#include "chat/output_format.h"

namespace ember::chat {

namespace {

bool is_ws(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

std::string_view rstrip(std::string_view s) {
    while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
    return s;
}

bool all_ws(std::string_view s) {
    return std::all_of(s.begin(), s.end(), is_ws);
}

// How many trailing bytes to hold back: a possible tag start, the whitespace before it (dropped if the tag
// comes), and an incomplete UTF-8 character.
size_t hold_back(std::string_view s, std::span<const std::string_view> tags) {
    size_t end = s.size() - tag_prefix_length(s, tags);
    while (end > 0 && is_ws(s[end - 1])) --end;
    end -= incomplete_utf8_length(s.substr(0, end));
    return s.size() - end;
}

// pending_: text not yet emitted (a possible tag prefix, or a tool call being collected).
class TaggedFormat final : public BufferedFormat {
public:
    explicit TaggedFormat(const ParserOptions& options)
        : options_(options), mode_(options.starts_in_reasoning ? Mode::reasoning : Mode::content) {}

private:
    enum class Mode { content, reasoning, tool_call };
    ParserOptions options_;
    Mode mode_;
    bool seen_content_ = false;  // non-whitespace content was emitted: a think block can no longer open
    bool strip_leading_ = true;  // at the start of a block, whose leading whitespace is dropped
    std::string tag_space_;      // whitespace dropped before <tool_call>, restored if it is no tool call

    void drain(ParsedDelta& out, bool at_end) override;
};

void TaggedFormat::drain(ParsedDelta& out, bool at_end) {
    // Leading whitespace of a block is dropped: tracked through the text already emitted for that block.
    auto emit = [&](std::string& target, std::string_view text) {
        if (strip_leading_) {
            while (!text.empty() && is_ws(text.front())) text.remove_prefix(1);
            if (!text.empty()) strip_leading_ = false;
        }
        if (&target == &out.content && !all_ws(text)) seen_content_ = true;
        target.append(text);
    };
    while (true) {
        if (mode_ == Mode::reasoning) {
            const size_t k = pending_.find(options_.think_close);
            if (k != std::string::npos) {
                emit(out.reasoning, rstrip(std::string_view(pending_).substr(0, k)));
                pending_.erase(0, k + options_.think_close.size());
                mode_ = Mode::content;
                strip_leading_ = true;
                continue;
            }
            if (at_end) {
                emit(out.reasoning, rstrip(pending_));
                pending_.clear();
                return;
            }
            const std::string_view close[] = {options_.think_close};
            const size_t keep = hold_back(pending_, close);
            emit(out.reasoning, std::string_view(pending_).substr(0, pending_.size() - keep));
            pending_.erase(0, pending_.size() - keep);
            return;
        }
        if (mode_ == Mode::tool_call) {
            const size_t k = pending_.find(options_.tool_close);
            if (k != std::string::npos) {
                const std::string body = pending_.substr(0, k);
                if (auto call = parse_tool_call(body)) {
                    out.tool_calls.push_back(std::move(*call));
                    strip_leading_ = true;
                } else {
                    emit(out.content, tag_space_ + options_.tool_open + body + options_.tool_close);
                }
                tag_space_.clear();
                pending_.erase(0, k + options_.tool_close.size());
                mode_ = Mode::content;
                continue;
            }
            if (at_end) {  // unterminated: the text was not a tool call after all
                emit(out.content, tag_space_ + options_.tool_open + pending_);
                tag_space_.clear();
                pending_.clear();
                mode_ = Mode::content;
            }
            return;
        }
        // Content: a think block may open only before any content; tool calls may start anywhere.
        size_t think_at = std::string::npos;
        if (!seen_content_ && !options_.think_open.empty()) {
            const size_t k = pending_.find(options_.think_open);
            if (k != std::string::npos && all_ws(std::string_view(pending_).substr(0, k))) think_at = k;
        }
        const size_t tool_at = options_.parse_tool_calls && !options_.tool_open.empty()
                                   ? pending_.find(options_.tool_open)
                                   : std::string::npos;
        const size_t k = std::min(think_at, tool_at);
        if (k != std::string::npos) {
            const std::string_view before = std::string_view(pending_).substr(0, k);
            const std::string_view kept = rstrip(before);
            emit(out.content, kept);
            if (k == think_at) {
                pending_.erase(0, k + options_.think_open.size());
                mode_ = Mode::reasoning;
                strip_leading_ = true;
            } else {
                tag_space_ = std::string(before.substr(kept.size()));
                pending_.erase(0, k + options_.tool_open.size());
                mode_ = Mode::tool_call;
            }
            continue;
        }
        if (at_end) {
            emit(out.content, pending_);
            pending_.clear();
            return;
        }
        std::vector<std::string_view> tags;
        if (options_.parse_tool_calls && !options_.tool_open.empty()) tags.push_back(options_.tool_open);
        if (!seen_content_ && !options_.think_open.empty()) tags.push_back(options_.think_open);
        const size_t keep = tags.empty() ? 0 : hold_back(pending_, tags);
        emit(out.content, std::string_view(pending_).substr(0, pending_.size() - keep));
        pending_.erase(0, pending_.size() - keep);
        return;
    }
}

}  // namespace

std::unique_ptr<OutputParser::Format> make_tagged_format(const ParserOptions& options) {
    return std::make_unique<TaggedFormat>(options);
}

}  // namespace ember::chat
