// SPDX-License-Identifier: MIT
// apply_template's variables (Hugging Face's conventions), the template a GGUF carries, and
// prompt_opens_reasoning on real rendered prompts.
#include <gtest/gtest.h>

#include "chat/chat_test_support.h"
#include "common/fixture_path.h"
#include "ember/gguf.h"

namespace {

using ember::chat::apply_template;
using ember::chat::RenderRequest;
using ember::chat::Template;
using json = nlohmann::ordered_json;

TEST(ApplyTemplate, PassesHuggingFaceVariables) {
    const Template t = Template::parse(
        "{{ messages|length }}|{{ tools }}|{{ documents }}|{{ add_generation_prompt }}|{{ bos_token is defined }}"
        "|{{ eos_token is defined }}|{{ enable_thinking }}|{{ custom.x }}",
        "vars");
    RenderRequest r;
    r.messages = json::array({{{"role", "user"}, {"content", "hi"}}});
    r.kwargs = {{"enable_thinking", false}, {"custom", {{"x", 1}}}};
    EXPECT_EQ(apply_template(t, r), "1|None|None|True|False|False|False|1");
    r.tools = json::array({{{"type", "function"}}});
    r.add_generation_prompt = false;
    r.bos_token = "<s>";
    r.eos_token = "</s>";
    EXPECT_EQ(apply_template(t, r), "1|[{'type': 'function'}]|None|False|True|True|False|1");
}

TEST(ApplyTemplate, ReasoningOfAToolCallReachesTemplatesThatReadThinking) {
    const Template oss = Template::parse(
        ember::test::read_file(ember::test::shared_templates() / "gpt-oss.jinja"), "gpt-oss.jinja");
    RenderRequest r;
    const json call = {{"type", "function"},
                       {"function", {{"name", "get_weather"}, {"arguments", {{"city", "Paris"}}}}}};
    r.messages = json::array({{{"role", "user"}, {"content", "Weather in Paris?"}},
                              {{"role", "assistant"},
                               {"reasoning_content", "The user wants the weather; call the tool."},
                               {"tool_calls", json::array({call})}},
                              {{"role", "tool"}, {"content", "{\"sunny\": true}"}}});
    EXPECT_EQ(apply_template(oss, r).find("call the tool"), std::string::npos) << "the template reads only thinking";
    ember::chat::carry_reasoning_to_thinking(oss, r);
    EXPECT_NE(apply_template(oss, r).find("<|channel|>analysis<|message|>The user wants the weather; call the tool."),
              std::string::npos);
    EXPECT_EQ(r.messages[1]["thinking"], "The user wants the weather; call the tool.");

    const Template plain = Template::parse("{{ messages[1].thinking is defined }}", "plain");
    RenderRequest q = r;
    q.messages[1].erase("thinking");
    ember::chat::carry_reasoning_to_thinking(plain, q);
    EXPECT_FALSE(q.messages[1].contains("thinking")) << "other templates see the messages as given";
}

TEST(ApplyTemplate, KwargsMayOverrideTokensButNotTheConversation) {
    const Template t = Template::parse("{{ bos_token }}", "kw");
    RenderRequest r;
    r.bos_token = "<s>";
    r.kwargs = {{"bos_token", "[BOS]"}};
    EXPECT_EQ(apply_template(t, r), "[BOS]");
    for (const char* reserved : {"messages", "tools", "documents", "add_generation_prompt"}) {
        r.kwargs = {{reserved, 1}};
        try {
            apply_template(t, r);
            FAIL() << reserved;
        } catch (const ember::Error& e) {
            EXPECT_EQ(std::string(e.what()), std::string("kw: template kwargs may not set '") + reserved + "'");
        }
    }
    r.kwargs = json::array();
    EXPECT_THROW(apply_template(t, r), ember::Error);
}

TEST(ApplyTemplate, ReadsTheTemplateAModelCarries) {
    const auto file = ember::gguf::File::open(ember::test::fixture_path("chat/qwen3.6.gguf"));
    const auto embedded = ember::chat::template_from_gguf(file);
    ASSERT_TRUE(embedded);
    EXPECT_EQ(*embedded, ember::test::read_file(ember::test::shared_templates() / "qwen3.6.jinja"));
    const auto none = ember::gguf::File::open(ember::test::fixture_path("chat/without_template.gguf"));
    EXPECT_FALSE(ember::chat::template_from_gguf(none));

    // Rendering the embedded template gives the golden prompt.
    RenderRequest r;
    r.messages = json::array({{{"role", "system"}, {"content", "You are a helpful assistant."}},
                              {{"role", "user"}, {"content", "What is the capital of France?"}},
                              {{"role", "assistant"}, {"content", "The capital of France is Paris."}}});
    r.eos_token = "<|im_end|>";
    EXPECT_EQ(apply_template(Template::parse(*embedded, "qwen3.6"), r),
              ember::test::read_file(ember::test::shared_templates() / "golden" / "qwen3.6__basic_system__gen.txt"));
}

TEST(PromptOpensReasoning, OnRenderedPrompts) {
    const auto golden = ember::test::shared_templates() / "golden";
    auto opens = [&](const std::string& file) {
        return ember::chat::prompt_opens_reasoning(ember::test::read_file(golden / file));
    };
    EXPECT_TRUE(opens("qwen3.6__basic_system__gen.txt"));
    EXPECT_TRUE(opens("qwen3.6-froggeric-v20__thinking_enabled__gen.txt"));
    EXPECT_FALSE(opens("qwen3.6__thinking_disabled__gen.txt"));    // <think>\n\n</think>\n\n
    EXPECT_FALSE(opens("qwen3__thinking_enabled__gen.txt"));       // Qwen3 lets the model open <think>
    EXPECT_FALSE(opens("qwen3.6__reasoning_history__nogen.txt"));  // closed blocks in the history
    EXPECT_FALSE(opens("llama3.1-instruct__basic_system__gen.txt"));
}

}  // namespace
