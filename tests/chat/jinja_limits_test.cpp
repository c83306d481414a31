// SPDX-License-Identifier: MIT
// The sandbox's limits: each ends the render with its own one-line error, long before memory or the stack run
// out.
#include <gtest/gtest.h>

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
