// SPDX-License-Identifier: MIT
// Routes a generation's decoded text through stop strings and, for chat turns, the reasoning/content parser, into
// the result and the caller's callback.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ember/runtime.h"
#include "runtime/stop_strings.h"

namespace ember::runtime {

// Routes decoded text through stop strings and, for chat turns, the reasoning/content parser, into the result and
// the caller's callback.
class OutputRouter {
public:
    OutputRouter(GenerationResult& result, const StreamCallback& callback, std::vector<std::string> stops,
                 std::optional<chat::ParserOptions> parser)
        : result_(result), callback_(callback), stops_(std::move(stops)) {
        if (parser) parser_.emplace(*parser);
    }

    // Returns false when the caller asked to stop.
    bool push(std::string_view text) { return route(stops_.push(text)); }
    bool finish() {
        bool go_on = route(stops_.flush());
        if (parser_) go_on = emit(parser_->finish()) && go_on;
        return go_on;
    }
    bool hit_stop_string() const { return stops_.stopped(); }

private:
    bool route(const std::string& text) {
        if (text.empty()) return true;
        if (parser_) return emit(parser_->push(text));
        return emit(chat::ParsedDelta{{}, text, {}});
    }
    bool emit(chat::ParsedDelta delta) {
        if (delta.content.empty() && delta.reasoning.empty() && delta.tool_calls.empty()) return true;
        result_.content += delta.content;
        result_.reasoning += delta.reasoning;
        result_.tool_calls.insert(result_.tool_calls.end(), delta.tool_calls.begin(), delta.tool_calls.end());
        if (!callback_) return true;
        return callback_(StreamChunk{std::move(delta.content), std::move(delta.reasoning), std::move(delta.tool_calls),
                                     static_cast<int64_t>(result_.tokens.size())});
    }

    GenerationResult& result_;
    const StreamCallback& callback_;
    StopStringFilter stops_;
    std::optional<chat::OutputParser> parser_;
};

}  // namespace ember::runtime
