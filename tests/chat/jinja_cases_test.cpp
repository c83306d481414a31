// SPDX-License-Identifier: MIT
// Every case of jinja_cases.json (statements, whitespace control, expressions, tests, filters, methods, globals
// and errors): Ember's render equals jinja2's recorded output, or fails with a one-line message containing the
// recorded text. jinja_cases_test.py checks the same records against jinja2 itself.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "chat/chat_test_support.h"

namespace {

const nlohmann::ordered_json& cases_file() {
    static const nlohmann::ordered_json data = [] {
        std::ifstream in(EMBER_JINJA_CASES);
        return nlohmann::ordered_json::parse(in);
    }();
    return data;
}

std::vector<std::string> case_names() {
    std::vector<std::string> names;
    for (const auto& c : cases_file()["cases"]) names.push_back(c["name"].get<std::string>());
    return names;
}

const nlohmann::ordered_json& find_case(const std::string& name) {
    for (const auto& c : cases_file()["cases"])
        if (c["name"] == name) return c;
    throw std::runtime_error("no case " + name);
}

class JinjaCase : public ::testing::TestWithParam<std::string> {};

TEST_P(JinjaCase, MatchesJinja2) {
    const auto& c = find_case(GetParam());
    const std::string source = c["template"].get<std::string>();
    const auto& variables = cases_file()["variables"];
    if (c.contains("expected")) {
        std::string out;
        ASSERT_NO_THROW(out = ember::test::render(source, variables)) << ember::test::render_error(source, variables);
        EXPECT_EQ(out, c["expected"].get<std::string>()) << source;
    } else {
        const std::string message = ember::test::render_error(source, variables);
        EXPECT_NE(message.find(c["error"].get<std::string>()), std::string::npos)
            << "got: " << message << "\nwant: " << c["error"].get<std::string>();
        EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, JinjaCase, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) { return param_info.param; });

}  // namespace
