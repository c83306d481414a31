// SPDX-License-Identifier: MIT
// The sandbox's limits: each ends the render with its own one-line error, long before memory or the stack run
// out.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <string>

#include "chat/chat_test_support.h"

namespace {

using ember::chat::Limits;
using ember::test::render;
using ember::test::render_error;

void expect_one_line_error(const std::string& message, const std::string& contains) {
    EXPECT_NE(message.find(contains), std::string::npos) << message;
    EXPECT_EQ(message.rfind("t:", 0), 0u) << "does not name the template: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(JinjaLimits, HugeRangeHitsTheStepLimit) {
    expect_one_line_error(render_error("{% for i in range(1000000000000) %}x{% endfor %}"),
                          "exceeded the limit of 10000000 steps");
}

TEST(JinjaLimits, NestedLoopsHitTheStepLimit) {
    Limits limits;
    limits.max_steps = 100000;
    expect_one_line_error(
        render_error("{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}", {}, limits),
        "exceeded the limit of 100000 steps");
}

TEST(JinjaLimits, RecursiveMacroHitsTheDepthLimit) {
    expect_one_line_error(render_error("{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}"),
                          "recursion deeper than the limit of 256 calls");
    Limits limits;
    limits.max_depth = 10;
    expect_one_line_error(render_error("{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}", {}, limits),
                          "recursion deeper than the limit of 10 calls");
    // Within the limit, recursion works.
    EXPECT_EQ(render("{% macro r(n) %}{% if n %}{{ n }}{{ r(n - 1) }}{% endif %}{% endmacro %}{{ r(9) }}", {}, limits),
              "987654321");
}

TEST(JinjaLimits, RecursiveLoopHitsTheDepthLimit) {
    Limits limits;
    limits.max_depth = 5;
    expect_one_line_error(render_error("{% for x in [1] recursive %}[{{ loop([x]) }}]{% endfor %}", {}, limits),
                          "recursion deeper than the limit of 5 calls");
}

TEST(JinjaLimits, OutputBlowUpHitsTheOutputLimit) {
    Limits limits;
    limits.max_output_bytes = 1 << 20;
    expect_one_line_error(render_error("{% for i in range(100000) %}{{ 'x' * 100 }}{% endfor %}", {}, limits),
                          "output exceeded the limit of 1048576 bytes");
}

TEST(JinjaLimits, HugeStringsAreRefusedBeforeTheyAreBuilt) {
    expect_one_line_error(render_error("{{ 'x' * 100000000000 }}"), "exceeds the output limit");
    expect_one_line_error(
        render_error("{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"),
        "exceeds the output limit");
    expect_one_line_error(render_error("{{ '%0999999999d' % 1 }}"), "format width too large");
    expect_one_line_error(render_error("{{ [1] * 100000000000 }}"), "steps");
}

// The outside fault run's templates (issue 20): each result's size is computed, with overflow-safe arithmetic,
// before anything is built, so none of them allocates more than the output limit or throws past the renderer.
TEST(JinjaLimits, BlowUpsAreSizedBeforeTheyAreBuilt) {
    // 100000 replacements of 100000 bytes: 10 GB before the fix.
    expect_one_line_error(render_error("{% set s='a'*100000 %}{{ s.replace('a', s)|length }}"),
                          "a string of 10000000000 bytes exceeds the output limit");
    expect_one_line_error(render_error("{% set s='a'*100000 %}{{ (s|replace('a', s))|length }}"),
                          "exceeds the output limit");
    expect_one_line_error(render_error("{% set s='a'*100000 %}{{ s.replace('', s)|length }}"),
                          "exceeds the output limit");
    // Within the limit, replace still works, count included.
    EXPECT_EQ(
        render("{{ 'abcab'.replace('ab', 'xyz') }}|{{ 'aaa'.replace('a', 'bb', 2) }}|{{ 'ab'.replace('', '-') }}"),
        "xyzcxyz|bbbba|-a-b-");
    // Padding whose byte count overflows 64 bits (a two-byte fill character), repeats, format widths.
    for (const auto& [source, message] : std::initializer_list<std::pair<const char*, const char*>>{
             {"{{ 'x'.center(9223372036854775807, 'é') }}", "exceeds the output limit"},
             {"{{ 'x'.ljust(9223372036854775807) }}", "exceeds the output limit"},
             {"{{ 'x'.zfill(9223372036854775807) }}", "exceeds the output limit"},
             {"{{ 'x'|center(9223372036854775807) }}", "exceeds the output limit"},
             {"{{ 'ab' * 9223372036854775807 }}", "exceeds the output limit"},
             {"{{ [1, 2] * 9223372036854775807 }}", "steps"},
             {"{{ '{:>9223372036854775807}'.format(1) }}", "format width too large"}})
        expect_one_line_error(render_error(source), message);
    EXPECT_EQ(render("{{ 'x'.center(5, 'é') }}"), "ééxéé");
}

// The fuzzer's one timeout (issue 20): an empty sequence times a count near 2^63 looped 2^63 times, adding nothing
// each time, so no size check fired. Now it is empty at once, like Python's.
TEST(JinjaLimits, EmptySequencesRepeatedAHugeNumberOfTimesAreEmptyAtOnce) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(render("[{{ '' * 9223372036854757870 }}]"), "[]");
    EXPECT_EQ(render("{{ ([] * 9223372036854775807)|length }}|{{ (() * 9223372036854775807)|length }}"), "0|0");
    EXPECT_EQ(render("{{ 9223372036854775807 * '' }}{{ ('' * 3)|length }}{{ ('ab' * 0)|length }}"), "00");
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
}

TEST(JinjaLimits, RangeOfTwoToTheSixtyFourIsRefusedNotThrown) {
    // The count 2^64 - 1 used to wrap the step counter around and reach std::vector::reserve (std::length_error).
    expect_one_line_error(render_error("{{ range(-9223372036854775807-1, 9223372036854775807)|length }}"),
                          "exceeded the limit of 10000000 steps");
    expect_one_line_error(render_error("{{ range(9223372036854775807, -9223372036854775807-1, -1)|length }}"),
                          "exceeded the limit of 10000000 steps");
    expect_one_line_error(render_error("{{ range(-9223372036854775807-1, 9223372036854775807, 2)|length }}"),
                          "exceeded the limit of 10000000 steps");
    EXPECT_EQ(render("{{ range(-9223372036854775807-1, -9223372036854775807+2)|list }}"),
              "[-9223372036854775808, -9223372036854775807, -9223372036854775806]");
}

TEST(JinjaLimits, ManyAssignmentsTakeLinearTime) {
    // 120000 {% set %} statements of distinct names took 29 s (each a scan of the scope) before the 5 s limit.
    std::string sets, attrs = "{% set ns = namespace() %}";
    for (int i = 0; i < 120000; ++i) {
        sets += "{% set v" + std::to_string(i) + " = " + std::to_string(i) + " %}";
        attrs += "{% set ns.a" + std::to_string(i) + " = " + std::to_string(i) + " %}";
    }
    for (const auto& [source, expected] :
         {std::pair{sets + "{{ v0 + v119999 }}", "119999"}, std::pair{attrs + "{{ ns.a0 + ns.a119999 }}", "119999"}}) {
        // Processor time, so that a busy machine does not make the test red (before the fix: over 40 s).
        const std::clock_t start = std::clock();
        ember::chat::Limits limits;
        limits.max_time = std::chrono::minutes(2);
        EXPECT_EQ(render(source, {}, limits), expected);
        const double seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
        EXPECT_LT(seconds, 2.0) << "120000 assignments took " << seconds << " s of processor time";
    }
}

TEST(JinjaLimits, MessagesNestedTooDeeplyAreRefusedBeforeTheyAreCopied) {
    // 100000 levels: copying them (nlohmann's copy recurses) overflowed the stack before the fix.
    nlohmann::ordered_json deep = "x";
    for (int i = 0; i < 100000; ++i) {
        nlohmann::ordered_json wrapper = nlohmann::ordered_json::array();
        wrapper.push_back(std::move(deep));
        deep = std::move(wrapper);
    }
    ember::chat::RenderRequest request;
    request.messages = nlohmann::ordered_json::array();
    request.messages.push_back({{"role", "user"}, {"content", std::move(deep)}});
    const auto tmpl = ember::chat::Template::parse("{{ messages|length }}", "t");
    try {
        ember::chat::apply_template(tmpl, request);
        ADD_FAILURE() << "no error";
    } catch (const ember::Error& e) {
        expect_one_line_error(e.what(), "the messages: nested deeper than the limit of 256 levels");
    }
    // The check itself walks without recursion, at any depth.
    EXPECT_THROW(ember::chat::require_json_depth(request.messages, 256, "m"), ember::Error);
    EXPECT_NO_THROW(ember::chat::require_json_depth(nlohmann::ordered_json::parse("[[[1]]]"), 3, "m"));
    EXPECT_THROW(ember::chat::require_json_depth(nlohmann::ordered_json::parse("[[[[1]]]]"), 3, "m"), ember::Error);
}

TEST(JinjaLimits, SlowTemplateHitsTheTimeLimit) {
    Limits limits;
    limits.max_time = std::chrono::milliseconds(50);
    limits.max_steps = UINT64_MAX / 2;
    expect_one_line_error(
        render_error("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", {}, limits),
        "rendering took longer than the limit of 50 ms");
}

TEST(JinjaLimits, DeeplyNestedSyntaxIsAParseError) {
    const std::string parens = "{{ " + std::string(500, '(') + "1" + std::string(500, ')') + " }}";
    expect_one_line_error(render_error(parens), "nested deeper than 128 levels");
    std::string ifs;
    for (int i = 0; i < 300; ++i) ifs += "{% if true %}";
    for (int i = 0; i < 300; ++i) ifs += "{% endif %}";
    expect_one_line_error(render_error(ifs), "nested deeper than 128 levels");
    // Moderate nesting is fine.
    EXPECT_EQ(render("{{ " + std::string(50, '(') + "1" + std::string(50, ')') + " }}"), "1");
}

TEST(JinjaLimits, DeeplyNestedValuesAreRefusedNotCrashing) {
    // A chain of 20000 nested lists built with append: printing it is refused at the value depth limit, and
    // releasing it at the end of the render does not recurse.
    const std::string build =
        "{% set ns = namespace(cur=[]) %}{% set root = ns.cur %}"
        "{% for i in range(20000) %}{% set n = [] %}{% set _ = ns.cur.append(n) %}{% set ns.cur = n %}{% endfor %}";
    EXPECT_EQ(render(build + "{{ root|length }}"), "1");
    expect_one_line_error(render_error(build + "{{ root }}"), "value nested deeper than the limit of 256 levels");
    expect_one_line_error(render_error(build + "{{ root|tojson }}"),
                          "value nested deeper than the limit of 256 levels");
    expect_one_line_error(render_error(build + "{{ root == root[0] }}"), "value nested deeper than the limit");
    // Deep JSON input is refused on the way in.
    nlohmann::ordered_json deep = 1;
    for (int i = 0; i < 300; ++i) deep = nlohmann::ordered_json::array({deep});
    const std::string message = render_error("{{ x }}", {{"x", deep}});
    EXPECT_NE(message.find("nested deeper than the limit of 256 levels"), std::string::npos) << message;
}

TEST(JinjaLimits, CyclesCannotBeCreated) {
    expect_one_line_error(render_error("{% set l = [] %}{{ l.append(l) }}"), "cannot append a list to itself");
    expect_one_line_error(render_error("{% set a = [] %}{% set b = [[a]] %}{{ a.append(b) }}"),
                          "cannot append a list to itself");
    expect_one_line_error(render_error("{% set ns = namespace() %}{% set ns.me = ns %}"),
                          "cannot store a namespace inside itself");
    expect_one_line_error(render_error("{% set ns = namespace() %}{% set ns.l = [{'x': ns}] %}"),
                          "cannot store a namespace inside itself");
}

TEST(JinjaLimits, ObjectsReferringToTheirScopeAreReleased) {
    // A macro stored in a namespace of its own scope, and a loop object kept past its loop: reference cycles
    // through scopes, broken when the render ends (the sanitizer build checks for leaks).
    EXPECT_EQ(render("{% set ns = namespace() %}{% macro m() %}M{% endmacro %}{% set ns.m = m %}{{ ns.m() }}"), "M");
    EXPECT_EQ(
        render("{% set ns = namespace() %}{% for x in [1, 2] %}{% set ns.l = loop %}{% endfor %}{{ ns.l.index }}"),
        "2");
    EXPECT_EQ(render("{% set ns = namespace(f=none) %}{% for x in [[1]] recursive %}{% set ns.f = loop %}{% endfor %}"
                     "{{ ns.f([]) }}ok"),
              "ok");
}

}  // namespace
