// SPDX-License-Identifier: MIT
// The streaming output parser in the tagged format on sample model outputs, cut at every split point (two chunks,
// any byte) and streamed byte by byte: the result never depends on where the chunks end, and no chunk emits part
// of a tag or of a UTF-8 character.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chat/parser_split_support.h"

namespace {

using ember::chat::OutputParser;
using ember::chat::ParsedDelta;
using ember::chat::ParserOptions;
using ember::chat::ToolCall;
using json = nlohmann::ordered_json;

using Expected = ember::test::ExpectedOutput;
using ember::test::check_every_split;

ParserOptions prompt_opened() {
    ParserOptions o;
    o.starts_in_reasoning = true;
    return o;
}

TEST(OutputParser, ReasoningOnlyWhenThePromptOpenedThink) {
    check_every_split("The user greets me.\nI should greet back.\n",
                      {"The user greets me.\nI should greet back.", "", {}}, prompt_opened());
}

TEST(OutputParser, ReasoningThenContentWhenThePromptOpenedThink) {
    check_every_split("The capital of France is Paris.\n</think>\n\nParis is the capital of France.",
                      {"The capital of France is Paris.", "Paris is the capital of France.", {}}, prompt_opened());
}

TEST(OutputParser, ReasoningOpenedByTheModel) {
    check_every_split("<think>\nHmm, 12 * 12 = 144.\n</think>\n\n144", {"Hmm, 12 * 12 = 144.", "144", {}});
    check_every_split("\n<think>\n\n</think>\n\nNo thoughts.", {"", "No thoughts.", {}});
}

TEST(OutputParser, ContentOnly) {
    check_every_split("Just an answer, with a < sign and <b>markup</b>.",
                      {"", "Just an answer, with a < sign and <b>markup</b>.", {}});
    // A think tag after content has begun is text, not reasoning.
    check_every_split("Use <think> tags like </think> this.", {"", "Use <think> tags like </think> this.", {}});
}

TEST(OutputParser, QwenXmlToolCallWithSeveralParameters) {
    const std::string out =
        "I'll check the weather.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n<parameter=options>\n{\"unit\": \"celsius\", \"hourly\": "
        "false}\n</parameter>\n"
        "<parameter=note>\nline one\nline two\n</parameter>\n</function>\n</tool_call>";
    check_every_split(out, {"",
                            "I'll check the weather.",
                            {{"get_weather", json{{"city", "Paris"},
                                                  {"days", 3},
                                                  {"options", json{{"unit", "celsius"}, {"hourly", false}}},
                                                  {"note", "line one\nline two"}}}}});
}

TEST(OutputParser, JsonToolCall) {
    check_every_split(
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": "
        "\"celsius\"}}\n</tool_call>",
        {"", "", {{"get_weather", json{{"city", "Paris"}, {"unit", "celsius"}}}}});
    // Arguments given as a JSON string, as some models write them.
    check_every_split("<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}</tool_call>",
                      {"", "", {{"f", json{{"a", 1}}}}});
}

TEST(OutputParser, ReasoningThenSeveralToolCalls) {
    const std::string out =
        "Two cities: call "
        "twice.\n</think>\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "</function>\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
        "\"Oslo\"}}\n</tool_call>";
    check_every_split(out,
                      {"Two cities: call twice.",
                       "",
                       {{"get_weather", json{{"city", "Paris"}}}, {"get_weather", json{{"city", "Oslo"}}}}},
                      prompt_opened());
}

TEST(OutputParser, UnterminatedTags) {
    // A think block the model never closed stays reasoning.
    check_every_split("<think>\nstill thinking about it", {"still thinking about it", "", {}});
    check_every_split("thinking and then the output stopped </thi",
                      {"thinking and then the output stopped </thi", "", {}}, prompt_opened());
    // An unterminated tool call is given back as content, exactly as written.
    check_every_split("Calling: <tool_call>\n<function=f>\n<parameter=a>\n1",
                      {"", "Calling: <tool_call>\n<function=f>\n<parameter=a>\n1", {}});
    // A partial tag at the very end is content too.
    check_every_split("The end <tool_ca", {"", "The end <tool_ca", {}});
}

TEST(OutputParser, MalformedToolCallIsContent) {
    check_every_split("Before <tool_call>not a call</tool_call> after",
                      {"", "Before <tool_call>not a call</tool_call> after", {}});
    check_every_split("<tool_call>\n<function=f>\n<parameter=a>\n1\n</tool_call>",
                      {"", "<tool_call>\n<function=f>\n<parameter=a>\n1\n</tool_call>", {}});
}

TEST(OutputParser, UnicodeIsNeverSplit) {
    check_every_split("Ünïcödé 😀 thoughts\n</think>\n\nRéponse 日本語 👨‍👩‍👧",
                      {"Ünïcödé 😀 thoughts", "Réponse 日本語 👨‍👩‍👧", {}}, prompt_opened());
}

TEST(OutputParser, CustomTagsAndToolParsingOff) {
    ParserOptions o;
    o.think_open = "<reasoning>";
    o.think_close = "</reasoning>";
    o.parse_tool_calls = false;
    check_every_split("<reasoning>why</reasoning>Answer <tool_call>{\"name\": \"f\"}</tool_call>",
                      {"why", "Answer <tool_call>{\"name\": \"f\"}</tool_call>", {}}, o);
}

TEST(OutputParser, EmitsTextAsSoonAsItCannotBeATag) {
    OutputParser parser;
    EXPECT_EQ(parser.push("Hello wor").content, "Hello wor");
    EXPECT_EQ(parser.push("ld <tool").content, "ld");  // " <tool" may start <tool_call>
    EXPECT_EQ(parser.push("box> ok").content, " <toolbox> ok");
    OutputParser thinking(prompt_opened());
    EXPECT_EQ(thinking.push("step one</th").reasoning, "step one");
    const ParsedDelta d = thinking.push("ink>\n\nDone");
    EXPECT_EQ(d.reasoning, "");
    EXPECT_EQ(d.content, "Done");
}

TEST(OutputParser, ToolCallBodies) {
    const auto xml = ember::chat::parse_tool_call(
        "\n<function=search>\n<parameter=query>\n\"quoted\" text\n</parameter>\n"
        "<parameter=limit>\n10\n</parameter>\n<parameter=empty>\n\n</parameter>\n</function>\n");
    ASSERT_TRUE(xml);
    EXPECT_EQ(xml->name, "search");
    EXPECT_EQ(xml->arguments, (json{{"query", "\"quoted\" text"}, {"limit", 10}, {"empty", ""}}));
    EXPECT_FALSE(ember::chat::parse_tool_call("<function=f>\n<parameter=a>1</function>"));
    EXPECT_FALSE(ember::chat::parse_tool_call("{\"arguments\": {}}"));
    EXPECT_FALSE(ember::chat::parse_tool_call("{\"name\": \"f\", \"arguments\": [1]}"));
    const auto no_args = ember::chat::parse_tool_call("{\"name\": \"now\"}");
    ASSERT_TRUE(no_args);
    EXPECT_EQ(no_args->arguments, json::object());
}

}  // namespace
