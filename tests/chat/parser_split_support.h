// SPDX-License-Identifier: MIT
// Checks an output parser on one model output cut at every split point (whole, every two-chunk split, byte by
// byte): the result never depends on where the chunks end, and no chunk emits part of a UTF-8 character.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "ember/chat.h"
#include "jinja/unicode.h"

namespace ember::test {

struct ExpectedOutput {
    std::string reasoning;
    std::string content;
    std::vector<std::pair<std::string, nlohmann::ordered_json>> calls;  // name, arguments
};

struct CollectedOutput {
    std::string reasoning, content;
    std::vector<chat::ToolCall> calls;
    void add(const chat::ParsedDelta& d) {
        EXPECT_EQ(chat::unicode::find_invalid(d.reasoning), std::string::npos) << "split UTF-8 in reasoning";
        EXPECT_EQ(chat::unicode::find_invalid(d.content), std::string::npos) << "split UTF-8 in content";
        reasoning += d.reasoning;
        content += d.content;
        calls.insert(calls.end(), d.tool_calls.begin(), d.tool_calls.end());
    }
};

inline CollectedOutput parse_chunks(const std::vector<std::string>& chunks, const chat::ParserOptions& options) {
    chat::OutputParser parser(options);
    CollectedOutput c;
    for (const auto& chunk : chunks) c.add(parser.push(chunk));
    c.add(parser.finish());
    return c;
}

inline void expect_output(const CollectedOutput& got, const ExpectedOutput& want, const std::string& where) {
    EXPECT_EQ(got.reasoning, want.reasoning) << where;
    EXPECT_EQ(got.content, want.content) << where;
    ASSERT_EQ(got.calls.size(), want.calls.size()) << where;
    for (size_t i = 0; i < want.calls.size(); ++i) {
        EXPECT_EQ(got.calls[i].name, want.calls[i].first) << where;
        EXPECT_EQ(got.calls[i].arguments, want.calls[i].second) << where;
    }
}

// One chunk, every two-chunk split, and byte-by-byte streaming.
inline void check_every_split(const std::string& output, const ExpectedOutput& want,
                              const chat::ParserOptions& options = {}) {
    expect_output(parse_chunks({output}, options), want, "whole");
    for (size_t i = 0; i <= output.size(); ++i)
        expect_output(parse_chunks({output.substr(0, i), output.substr(i)}, options), want,
                      "split at " + std::to_string(i));
    std::vector<std::string> bytes;
    for (char c : output) bytes.emplace_back(1, c);
    expect_output(parse_chunks(bytes, options), want, "byte by byte");
}

}  // namespace ember::test
