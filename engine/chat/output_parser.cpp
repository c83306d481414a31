// SPDX-License-Identifier: MIT
// The streaming split of model output into reasoning, content and tool calls. Text is emitted as soon as it
// cannot be part of a tag; whitespace around the think and tool-call tags is dropped (it belongs to the
// format, as the templates write it), so that reasoning and content come out as the templates expect them back.
#include <algorithm>

#include "ember/chat.h"

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

// How many trailing bytes to hold back: the longest suffix that starts one of the tags, the whitespace before
// it, and an incomplete UTF-8 sequence.
size_t hold_back(std::string_view s, const std::vector<std::string_view>& tags) {
    size_t keep = 0;
    for (std::string_view tag : tags) {
        for (size_t n = std::min(tag.size() - 1, s.size()); n > keep; --n) {
            if (s.substr(s.size() - n) == tag.substr(0, n)) {
                keep = n;
                break;
            }
        }
    }
    size_t end = s.size() - keep;
    while (end > 0 && is_ws(s[end - 1])) --end;
    size_t i = end, continuation = 0;
    while (i > 0 && continuation < 3 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) --i, ++continuation;
    if (i > 0) {
        const unsigned char lead = static_cast<unsigned char>(s[i - 1]);
        const size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
        if (continuation + 1 < need) end = i - 1;
    }
    return s.size() - end;
}

}  // namespace

OutputParser::OutputParser(ParserOptions options)
    : options_(std::move(options)), mode_(options_.starts_in_reasoning ? Mode::reasoning : Mode::content) {}

ParsedDelta OutputParser::push(std::string_view chunk) {
    ParsedDelta out;
    pending_.append(chunk);
    drain(out, false);
    return out;
}

ParsedDelta OutputParser::finish() {
    ParsedDelta out;
    drain(out, true);
    return out;
}

void OutputParser::drain(ParsedDelta& out, bool at_end) {
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
            const size_t keep = hold_back(pending_, {options_.think_close});
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

bool prompt_opens_reasoning(std::string_view prompt, const ParserOptions& options) {
    if (options.think_open.empty()) return false;
    const std::string_view tail = rstrip(prompt);
    return tail.size() >= options.think_open.size() &&
           tail.substr(tail.size() - options.think_open.size()) == options.think_open;
}

}  // namespace ember::chat
