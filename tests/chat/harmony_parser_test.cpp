// SPDX-License-Identifier: MIT
// The streaming output parser in the harmony format (gpt-oss) on sample outputs after the generation prompt
// "<|start|>assistant", cut at every split point: channels map to reasoning, content and tool calls whatever the
// chunks, and the format is chosen from the template.
#include <gtest/gtest.h>

#include <string>

#include "chat/chat_test_support.h"
#include "chat/parser_split_support.h"

namespace {

using ember::chat::OutputFormat;
using ember::chat::OutputParser;
using ember::chat::ParserOptions;
using ember::test::check_every_split;
using json = nlohmann::ordered_json;

ParserOptions harmony() {
    ParserOptions o;
    o.format = OutputFormat::harmony;
    return o;
}

// The runtime stops on <|return|> and <|call|> before the parser sees them: each output is checked both ways.
void check_with_and_without(const std::string& output, std::string_view stop, const ember::test::ExpectedOutput& want) {
    check_every_split(output + std::string(stop), want, harmony());
    check_every_split(output, want, harmony());
}

TEST(HarmonyParser, ReasoningThenFinal) {
    check_with_and_without(
        "<|channel|>analysis<|message|>The user asks for the capital of France.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>The capital of France is Paris.",
        "<|return|>", {"The user asks for the capital of France.", "The capital of France is Paris.", {}});
}

TEST(HarmonyParser, ReasoningThenToolCall) {
    check_with_and_without(
        "<|channel|>analysis<|message|>Need the weather tool.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
        "{\"location\":\"Paris\"}",
        "<|call|>", {"Need the weather tool.", "", {{"get_weather", json{{"location", "Paris"}}}}});
}

TEST(HarmonyParser, PreambleThenToolCall) {
    check_with_and_without(
        "<|channel|>analysis<|message|>Look it up.<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Let me check the weather.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>"
        "{\"location\": \"Paris\", \"days\": 2}",
        "<|call|>",
        {"Look it up.", "Let me check the weather.", {{"get_weather", json{{"location", "Paris"}, {"days", 2}}}}});
}

TEST(HarmonyParser, RecipientBeforeChannel) {
    // The form gpt-oss's template writes for past calls, after an analysis message or as the first header.
    check_with_and_without(
        "<|channel|>analysis<|message|>Weather again.<|end|>"
        "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>"
        "{\"city\": \"Paris\", \"unit\": \"celsius\"}",
        "<|call|>", {"Weather again.", "", {{"get_weather", json{{"city", "Paris"}, {"unit", "celsius"}}}}});
    check_with_and_without(" to=functions.now<|channel|>commentary json<|message|>{}", "<|call|>",
                           {"", "", {{"now", json::object()}}});
}

TEST(HarmonyParser, UnterminatedMessagesFlushToTheirChannel) {
    check_every_split(
        "<|channel|>analysis<|message|>Reason.<|end|><|start|>assistant<|channel|>final<|message|>Partial answ",
        {"Reason.", "Partial answ", {}}, harmony());
    check_every_split("<|channel|>analysis<|message|>Still thinking ab", {"Still thinking ab", "", {}}, harmony());
    // A header cut off before its body shows nothing.
    check_every_split("<|channel|>analysis<|message|>Done.<|end|><|start|>assistant<|channel|>fin", {"Done.", "", {}},
                      harmony());
}

TEST(HarmonyParser, MalformedArgumentsAreContent) {
    // A tool call whose body is not a JSON object is no call: its body is shown, as an unparsable <tool_call> is.
    check_with_and_without(
        "<|channel|>analysis<|message|>Call it.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
        "{\"location\": Paris}",
        "<|call|>", {"Call it.", "{\"location\": Paris}", {}});
    check_with_and_without("<|channel|>commentary to=functions.f json<|message|>[1, 2]", "<|call|>",
                           {"", "[1, 2]", {}});
    // A bare "functions." names no function: the body is the channel's text.
    check_with_and_without("<|channel|>commentary to=functions. json<|message|>{}", "<|call|>", {"", "{}", {}});
}

TEST(HarmonyParser, OtherRecipientsAndChannels) {
    // Built-in tools (browser, python) are not Ember's: their messages read as their channel's text.
    check_every_split("<|channel|>analysis to=browser.search<|message|>{\"query\": \"x\"}<|call|>",
                      {"{\"query\": \"x\"}", "", {}}, harmony());
    check_every_split("<|channel|>unknown<|message|>Text.<|end|>", {"", "Text.", {}}, harmony());
}

TEST(HarmonyParser, OutputWithoutHeadersIsContent) {
    check_every_split("Hello there, 日本語 👋", {"", "Hello there, 日本語 👋", {}}, harmony());
    check_every_split("tomato<|end|><|start|>assistant<|channel|>final<|message|>soup", {"", "tomatosoup", {}},
                      harmony());
}

TEST(HarmonyParser, UnicodeIsNeverSplit) {
    check_with_and_without(
        "<|channel|>analysis<|message|>Ünïcödé 😀 thoughts<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Réponse 日本語 👨‍👩‍👧",
        "<|return|>", {"Ünïcödé 😀 thoughts", "Réponse 日本語 👨‍👩‍👧", {}});
}

TEST(HarmonyParser, MessageWithoutTerminatorBeforeTheNextHeader) {
    check_every_split("<|channel|>analysis<|message|>Short.<|start|>assistant<|channel|>final<|message|>Yes.",
                      {"Short.", "Yes.", {}}, harmony());
    check_every_split("<|channel|>analysis<|message|>Short.<|channel|>final<|message|>Yes.", {"Short.", "Yes.", {}},
                      harmony());
}

TEST(HarmonyParser, EmitsTextAsSoonAsItCannotBeAToken) {
    OutputParser parser(harmony());
    EXPECT_TRUE(parser.push("<|channel|>analysis<|mess").empty());
    EXPECT_EQ(parser.push("age|>Step one").reasoning, "Step one");
    EXPECT_EQ(parser.push(" two <|e").reasoning, " two ");  // "<|e" may start <|end|>
    EXPECT_EQ(parser.push("x|> three").reasoning, "<|ex|> three");
    EXPECT_EQ(parser.push("<|end|><|start|>assistant<|channel|>final<|message|>An").content, "An");
    OutputParser tool(harmony());
    EXPECT_TRUE(tool.push("<|channel|>commentary to=functions.f<|message|>{\"a\":").empty());  // collected whole
    const auto done = tool.push("1}<|call|>");
    ASSERT_EQ(done.tool_calls.size(), 1u);
    EXPECT_EQ(done.tool_calls[0].raw, "{\"a\":1}");
}

TEST(HarmonyParser, ChosenForTemplatesThatWriteChannels) {
    const auto gpt_oss = ember::chat::Template::parse(
        ember::test::read_file(ember::test::shared_templates() / "gpt-oss.jinja"), "gpt-oss.jinja");
    EXPECT_EQ(ember::chat::parser_options_for(gpt_oss, "<|start|>assistant").format, OutputFormat::harmony);
    const auto tagged = ember::chat::Template::parse("{{ messages[0].content }}<think>\n", "t");
    const ParserOptions chosen = ember::chat::parser_options_for(tagged, "hi<think>\n");
    EXPECT_EQ(chosen.format, OutputFormat::tagged);
    EXPECT_TRUE(chosen.starts_in_reasoning);
    EXPECT_FALSE(ember::chat::parser_options_for(tagged, "hi").starts_in_reasoning);
}

}  // namespace
