// SPDX-License-Identifier: MIT
// A chat with gpt-oss's template is read in the harmony format: a tiny model fixture, made to write a scripted
// harmony reply, gets its analysis back as reasoning and its final message as content.
#include <gtest/gtest.h>

#include "common/fixture_path.h"
#include "ember/constraint.h"
#include "ember/runtime.h"

using namespace ember;

namespace {

// Allows exactly the scripted tokens, then only the end of generation.
class ScriptConstraint : public TokenConstraint {
public:
    explicit ScriptConstraint(std::vector<int32_t> script) : script_(std::move(script)) {}
    std::unique_ptr<State> start() const override { return std::make_unique<Walk>(script_); }

private:
    struct Walk : State {
        explicit Walk(const std::vector<int32_t>& s) : script(s) {}
        bool allows(int32_t token) const override { return next < script.size() && script[next] == token; }
        bool complete() const override { return next == script.size(); }
        void accept(int32_t) override { ++next; }
        const std::vector<int32_t>& script;
        size_t next = 0;
    };
    std::vector<int32_t> script_;
};

}  // namespace

TEST(HarmonySession, ChatWithAHarmonyTemplateSplitsChannels) {
    LoadOptions lo;
    lo.threads = 2;
    lo.chat_template_file = std::filesystem::path(EMBER_SHARED_DATA) / "templates" / "gpt-oss.jinja";
    auto model = LoadedModel::load(test::fixture_path("dense") / "qwen3-f32.gguf", lo);
    // The fixture's vocabulary has no harmony tokens: the headers come as plain text, as the parser reads them.
    const std::string reply =
        "<|channel|>analysis<|message|>The user greets.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Hello!";
    GenerationOptions options;
    options.max_tokens = 200;
    options.constraint = std::make_shared<ScriptConstraint>(model->tokenizer().encode(reply, false, false));
    chat::RenderRequest conversation;
    conversation.messages.push_back({{"role", "user"}, {"content", "hi"}});
    Session session(model);
    const GenerationResult result = session.chat(conversation, options);
    EXPECT_EQ(result.stop_reason, StopReason::end_of_generation);
    EXPECT_EQ(result.reasoning, "The user greets.");
    EXPECT_EQ(result.content, "Hello!");
}
