// SPDX-License-Identifier: MIT
// The harmony output format (gpt-oss): a sequence of messages, each a header — [<|start|>role] [to=RECIPIENT]
// <|channel|>CHANNEL [to=RECIPIENT] [<|constrain|>]TYPE — then <|message|>, a body, and <|end|>, <|return|> or
// <|call|>. Bodies are streamed as they arrive; headers and tool-call bodies are collected whole.
#include <array>
#include <string>

#include "chat/output_format.h"

namespace ember::chat {

namespace {

constexpr std::string_view kStart = "<|start|>", kChannel = "<|channel|>", kMessage = "<|message|>";
constexpr std::string_view kEnd = "<|end|>", kReturn = "<|return|>", kCall = "<|call|>";
constexpr std::string_view kFunctions = "functions.";
// The tokens that end a message body: its terminators, and the start of a next header without one.
constexpr std::array<std::string_view, 5> kBodyEnds = {kEnd, kReturn, kCall, kStart, kChannel};

bool is_ws(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_ws(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
    return s;
}

// The earliest of `tokens` in `s`: its position and length, or npos.
std::pair<size_t, size_t> find_first(std::string_view s, std::span<const std::string_view> tokens) {
    std::pair<size_t, size_t> first{std::string_view::npos, 0};
    for (std::string_view t : tokens)
        if (const size_t k = s.find(t); k < first.first) first = {k, t.size()};
    return first;
}

// The word after `key` in a header (up to whitespace or the next special token), or "".
std::string_view word_after(std::string_view header, std::string_view key) {
    const size_t k = header.find(key);
    if (k == std::string_view::npos) return {};
    std::string_view rest = header.substr(k + key.size());
    size_t n = 0;
    while (n < rest.size() && !is_ws(rest[n]) && rest[n] != '<') ++n;
    return rest.substr(0, n);
}

// Whether text could still be a header: after the generation prompt's "<|start|>assistant" the model writes
// <|channel|> or " to=" first, and later messages open with <|start|>.
bool could_be_header(std::string_view text) {
    while (!text.empty() && is_ws(text.front())) text.remove_prefix(1);
    for (std::string_view opener : {kStart, kChannel, std::string_view("to=")}) {
        const size_t n = std::min(text.size(), opener.size());
        if (text.substr(0, n) == opener.substr(0, n)) return true;
    }
    return false;
}

// pending_: a header being collected, body text held back, or a tool-call body.
class HarmonyFormat final : public BufferedFormat {
private:
    enum class State { header, text, tool_call };
    State state_ = State::header;
    bool reasoning_ = false;  // in State::text: the body is reasoning (the analysis channel), else content
    std::string tool_;        // in State::tool_call: the function's name

    void drain(ParsedDelta& out, bool at_end) override;
    void open_message(std::string_view header);
    void emit_call(std::string_view body, ParsedDelta& out) const;
};

void HarmonyFormat::drain(ParsedDelta& out, bool at_end) {
    while (true) {
        if (state_ == State::header) {
            if (!could_be_header(pending_)) {  // no harmony here: plain content up to the next message
                state_ = State::text;
                reasoning_ = false;
                continue;
            }
            const size_t message = pending_.find(kMessage);
            const std::string_view ends[] = {kEnd, kReturn, kCall};
            const auto [end, end_size] = find_first(pending_, ends);
            if (end < message) {  // a header with no body
                pending_.erase(0, end + end_size);
                continue;
            }
            if (message != std::string::npos) {
                open_message(std::string_view(pending_).substr(0, message));
                pending_.erase(0, message + kMessage.size());
                continue;
            }
            if (at_end) pending_.clear();  // a header cut off: nothing to show
            return;
        }
        const auto [end, end_size] = find_first(pending_, kBodyEnds);
        if (end != std::string::npos || at_end) {
            const std::string_view body = std::string_view(pending_).substr(0, end);
            if (state_ == State::tool_call)
                emit_call(body, out);
            else
                (reasoning_ ? out.reasoning : out.content).append(body);
            // A next header that opens without a terminator keeps its opening token.
            const std::string_view closing =
                std::string_view(pending_).substr(std::min(end, pending_.size()), end_size);
            pending_.erase(0, closing == kStart || closing == kChannel ? end : end + end_size);
            state_ = State::header;
            if (end == std::string::npos) return;
            continue;
        }
        if (state_ == State::text) {
            const std::string_view text = std::string_view(pending_);
            size_t emit = text.size() - tag_prefix_length(text, kBodyEnds);
            emit -= incomplete_utf8_length(text.substr(0, emit));
            (reasoning_ ? out.reasoning : out.content).append(text.substr(0, emit));
            pending_.erase(0, emit);
        }
        return;
    }
}

void HarmonyFormat::open_message(std::string_view header) {
    const std::string_view recipient = word_after(header, "to=");
    if (recipient.starts_with(kFunctions) && recipient.size() > kFunctions.size()) {
        state_ = State::tool_call;
        tool_ = std::string(recipient.substr(kFunctions.size()));
        return;
    }
    state_ = State::text;
    reasoning_ = word_after(header, kChannel) == "analysis";
}

// A tool call's body is its arguments, a JSON object ({} when empty); anything else is shown as content.
void HarmonyFormat::emit_call(std::string_view body, ParsedDelta& out) const {
    const std::string_view json = trim(body);
    auto arguments = json.empty() ? nlohmann::ordered_json::object()
                                  : nlohmann::ordered_json::parse(json.begin(), json.end(), nullptr, false);
    if (arguments.is_discarded() || !arguments.is_object()) {
        out.content.append(body);
        return;
    }
    out.tool_calls.push_back(ToolCall{tool_, std::move(arguments), std::string(body)});
}

}  // namespace

std::unique_ptr<OutputParser::Format> make_harmony_format() {
    return std::make_unique<HarmonyFormat>();
}

}  // namespace ember::chat
