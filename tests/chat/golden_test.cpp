// SPDX-License-Identifier: MIT
// Every real chat template in shared/data/templates renders every conversation byte-identically to the golden
// output Python jinja2 produced (render_golden.py's conventions, through apply_template), and the combinations
// of golden/ERRORS.txt fail with the same message.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "chat/chat_test_support.h"
#include "common/fixture_path.h"

namespace {

namespace fs = std::filesystem;
using ember::test::read_file;
using ember::test::shared_templates;

std::vector<std::string> template_names() {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(shared_templates()))
        if (entry.path().extension() == ".jinja") names.push_back(entry.path().stem().string());
    std::sort(names.begin(), names.end());
    return names;
}

// "<template>\t<conversation>\t<gen|nogen>" -> the Python message without its exception type.
std::map<std::string, std::string> expected_errors() {
    std::map<std::string, std::string> errors;
    std::istringstream lines(read_file(shared_templates() / "golden" / "ERRORS.txt"));
    std::string line;
    while (std::getline(lines, line)) {
        if (line.empty() || line[0] == '#') continue;
        const size_t a = line.find('\t'), b = line.find('\t', a + 1), c = line.find('\t', b + 1);
        const std::string message = line.substr(c + 1);
        errors[line.substr(0, c)] = message.substr(message.find(": ") + 2);
    }
    return errors;
}

class GoldenTemplate : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTemplate, RendersEveryConversationLikeJinja2) {
    const std::string name = GetParam();
    const auto tokens = nlohmann::json::parse(read_file(ember::test::fixture_path("chat/special_tokens.json")));
    const auto conversations = nlohmann::ordered_json::parse(read_file(shared_templates() / "conversations.json"));
    const auto errors = expected_errors();
    const ember::chat::Template tmpl =
        ember::chat::Template::parse(read_file(shared_templates() / (name + ".jinja")), name + ".jinja");
    int compared = 0;
    for (const auto& conv : conversations) {
        for (const bool gen : {true, false}) {
            const std::string key = name + "\t" + conv["name"].get<std::string>() + "\t" + (gen ? "gen" : "nogen");
            ember::chat::RenderRequest request;
            request.messages = conv["messages"];
            request.tools = conv.value("tools", nlohmann::ordered_json());
            request.kwargs = conv.value("kwargs", nlohmann::ordered_json::object());
            request.add_generation_prompt = gen;
            request.now = ember::test::golden_now();
            if (tokens.contains(name)) {
                if (tokens[name]["bos_token"].is_string())
                    request.bos_token = tokens[name]["bos_token"].get<std::string>();
                if (tokens[name]["eos_token"].is_string())
                    request.eos_token = tokens[name]["eos_token"].get<std::string>();
            }
            if (const auto it = errors.find(key); it != errors.end()) {
                try {
                    ember::chat::apply_template(tmpl, request);
                    ADD_FAILURE() << key << ": rendered, but jinja2 raised: " << it->second;
                } catch (const ember::Error& e) {
                    EXPECT_NE(std::string(e.what()).find(it->second), std::string::npos)
                        << key << "\n  ember:  " << e.what() << "\n  jinja2: " << it->second;
                }
                ++compared;
                continue;
            }
            const fs::path golden =
                shared_templates() / "golden" /
                (name + "__" + conv["name"].get<std::string>() + "__" + (gen ? "gen" : "nogen") + ".txt");
            ASSERT_TRUE(fs::exists(golden)) << golden;
            std::string out;
            try {
                out = ember::chat::apply_template(tmpl, request);
            } catch (const ember::Error& e) {
                ADD_FAILURE() << key << ": " << e.what();
                continue;
            }
            EXPECT_EQ(out, read_file(golden)) << key;
            ++compared;
        }
    }
    EXPECT_EQ(compared, static_cast<int>(conversations.size()) * 2);
}

INSTANTIATE_TEST_SUITE_P(Templates, GoldenTemplate, ::testing::ValuesIn(template_names()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                             std::string n = param_info.param;
                             for (char& ch : n)
                                 if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                             return n;
                         });

TEST(Golden, AllGoldenFilesAreCovered) {
    // 15 templates x 10 conversations x 2 = 300 combinations: 286 golden files + 14 listed errors.
    size_t files = 0;
    for (const auto& entry : fs::directory_iterator(shared_templates() / "golden"))
        if (entry.path().extension() == ".txt" && entry.path().filename() != "ERRORS.txt") ++files;
    const auto conversations = nlohmann::ordered_json::parse(read_file(shared_templates() / "conversations.json"));
    EXPECT_EQ(files + expected_errors().size(), template_names().size() * conversations.size() * 2);
}

}  // namespace
