// SPDX-License-Identifier: MIT
// What jinja_cases.json cannot hold: error positions and formats, Ember's additions (list.append, which the
// Hugging Face sandbox refuses), template reuse, bad input, and the clock.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "chat/chat_test_support.h"

namespace {

using ember::chat::Template;
using ember::test::render;
using ember::test::render_error;

TEST(JinjaErrors, RuntimeErrorsNameTemplateLineAndColumn) {
    EXPECT_EQ(render_error("line one\n  {{ missing.attr }}"), "t:2:13: 'missing' is undefined");
    EXPECT_EQ(render_error("{{ 'a' + [1] }}"), "t:1:8: can only concatenate str (not \"list\") to str");
    // Columns count code points, not bytes.
    EXPECT_EQ(render_error("héé {{ none.x.y }}"), "t:1:14: 'None' has no attribute 'x'");
}

TEST(JinjaErrors, SyntaxErrorsNameTemplateLineAndColumn) {
    EXPECT_EQ(render_error("a\nb\n{% endfor %}"), "t:3:4: unexpected 'endfor'");
    EXPECT_EQ(render_error("{% for x in y %}\n{% endif %}"), "t:2:4: unexpected 'endif'");
    EXPECT_EQ(render_error("{{ 1 +* 2 }}"), "t:1:7: unexpected '*'");
    EXPECT_EQ(render_error("ok\n{% if x %}never closed"),
              "t:2:23: unexpected end of template, expected 'elif' or 'else' or 'endif'");
}

TEST(JinjaErrors, RaiseExceptionIsNameAndMessage) {
    EXPECT_EQ(render_error("{{ raise_exception('Conversation roles must alternate') }}"),
              "t: Conversation roles must alternate");
    // Line breaks in messages are escaped: every error is one line.
    EXPECT_EQ(render_error("{% if true %}{{ raise_exception('line\\nbreak\\x01') }}{% endif %}"),
              "t: line\\nbreak\\x01");
    EXPECT_EQ(render_error("{{ {'a': 1}['multi\\nline'].x }}"),
              "t:1:27: 'dict object' has no attribute 'multi\\nline'");
}

TEST(JinjaErrors, BadInputIsRefusedWithOneLine) {
    EXPECT_EQ(render_error(std::string("ok {{ x }} \xff\xfe")), "t:1:12: invalid UTF-8 in the template");
    try {
        Template::parse("{{ x }}", "t").render(nlohmann::ordered_json::array({1}));
        FAIL();
    } catch (const ember::Error& e) {
        EXPECT_STREQ(e.what(), "t: the template variables must be a JSON object");
    }
    nlohmann::ordered_json bad = {{"x", std::string("\xc3\x28")}};
    EXPECT_EQ(render_error("{{ x }}", bad), "t: the variables holds invalid UTF-8");
}

TEST(JinjaEmber, ListAppendMutatesSharedLists) {
    // The Hugging Face sandbox refuses append; Ember allows it (templates written for other engines use it),
    // with Python's reference semantics.
    EXPECT_EQ(render("{% set l = [] %}{{ l.append(1) }}{% set m = l %}{% set _ = m.append('b') %}{{ l }}"),
              "None[1, 'b']");
    EXPECT_EQ(render("{% set ns = namespace(items=[]) %}{% for x in [1, 2] %}{% set _ = ns.items.append(x * 10) %}"
                     "{% endfor %}{{ ns.items|tojson }}"),
              "[10, 20]");
    EXPECT_NE(render_error("{{ (1, 2).append(3) }}").find("has no attribute 'append'"), std::string::npos);
}

TEST(JinjaEmber, RangeIsAList) {
    // jinja2 prints range objects as "range(0, 3)"; Ember's range() is a list. Templates iterate it, so only
    // printing it bare differs.
    EXPECT_EQ(render("{{ range(3) }}"), "[0, 1, 2]");
}

TEST(JinjaTemplate, ParsedOnceRenderedManyTimes) {
    const Template tmpl = Template::parse("{% for m in messages %}{{ m }};{% endfor %}", "reuse");
    EXPECT_EQ(tmpl.name(), "reuse");
    EXPECT_EQ(tmpl.render({{"messages", {1, 2}}}), "1;2;");
    const Template copy = tmpl;
    EXPECT_EQ(copy.render({{"messages", {"a"}}}), "a;");
    EXPECT_EQ(tmpl.render({}), "");
    EXPECT_EQ(tmpl.render(nullptr), "");
}

TEST(JinjaTemplate, StrftimeNowUsesTheGivenOrTheSystemClock) {
    using namespace std::chrono;
    const auto t = local_days{year{2024} / February / 29} + hours{23} + minutes{5} + seconds{9};
    EXPECT_EQ(Template::parse("{{ strftime_now('%Y-%m-%d %H:%M:%S %A %j') }}", "t").render({}, {}, t),
              "2024-02-29 23:05:09 Thursday 060");
    const std::string now = Template::parse("{{ strftime_now('%Y-%m-%d') }}", "t").render({});
    EXPECT_TRUE(std::regex_match(now, std::regex("\\d{4}-\\d{2}-\\d{2}"))) << now;
}

TEST(JinjaTemplate, GlobalsAreNotData) {
    // Names that are not given are undefined; the sandbox offers nothing beyond the documented globals.
    EXPECT_EQ(render("{{ os is defined }}{{ self is defined }}{{ range is defined }}{{ namespace is callable }}"),
              "FalseFalseTrueTrue");
    EXPECT_EQ(render("{{ ''.__class__ is defined }}{{ {}.__init__ is defined }}"), "FalseFalse");
}

}  // namespace

#include "jinja/budget.h"
#include "jinja/jinja_value.h"

namespace {

TEST(JinjaValues, JsonRoundTrip) {
    using namespace ember::chat::jinja;
    Budget budget{ember::chat::Limits{}};
    const auto j = nlohmann::ordered_json::parse(
        R"({"z": 1, "a": [1.5, -2, true, null, "é😀"], "big": 18446744073709551615, "nested": {"k": []}})");
    const Value v = from_json(j, budget, "test");
    auto back = j;
    back["big"] = 18446744073709551615.0;  // beyond int64: a float, as the value model holds it
    EXPECT_EQ(to_json(v, budget), back);
    EXPECT_EQ(to_json(Value::make_list({Value::integer(1), Value::text("x")}, true), budget),
              nlohmann::ordered_json::array({1, "x"}));
    EXPECT_THROW(to_json(Value(), budget), Failure);
}

}  // namespace
