// SPDX-License-Identifier: MIT
#include "prompt_builder.h"

namespace ember::desktop {

namespace {

// A question's content: its text, or with images the parts [image..., text] (images collected in order).
nlohmann::ordered_json questionContent(const ChatMessage& m, const PromptOptions& options, QList<TurnImage>* images) {
    if (!options.sendImages || m.attachments.isEmpty()) return m.content.toStdString();
    nlohmann::ordered_json parts = nlohmann::ordered_json::array();
    for (const Attachment& a : m.attachments) {
        parts.push_back({{"type", "image"}});
        if (images) images->append({a.name, a.data});
    }
    if (!m.content.isEmpty()) parts.push_back({{"type", "text"}, {"text", m.content.toStdString()}});
    return parts;
}

// Appends a question to the user turn before it (content parts or text).
void appendToQuestion(nlohmann::ordered_json& previous, nlohmann::ordered_json content) {
    if (previous.is_string() && content.is_string()) {
        previous = previous.get<std::string>() + "\n\n" + content.get<std::string>();
        return;
    }
    const auto asParts = [](nlohmann::ordered_json c) {
        return c.is_string() ? nlohmann::ordered_json::array({{{"type", "text"}, {"text", c.get<std::string>()}}}) : c;
    };
    nlohmann::ordered_json parts = asParts(std::move(previous));
    for (auto& part : asParts(std::move(content))) parts.push_back(std::move(part));
    previous = std::move(parts);
}

}  // namespace

chat::RenderRequest buildRenderRequest(const QList<ChatMessage>& branch, const PromptOptions& options,
                                       QList<TurnImage>* images) {
    chat::RenderRequest request;
    if (!options.systemPrompt.trimmed().isEmpty())
        request.messages.push_back({{"role", "system"}, {"content", options.systemPrompt.toStdString()}});
    for (const ChatMessage& m : branch) {
        // A reply that failed, was stopped or was interrupted before it wrote any answer says nothing the model
        // should read back: an empty assistant turn would teach it to answer with nothing.
        if (m.role == QLatin1String("assistant") && m.content.isEmpty() && m.state != message_state::complete) continue;
        // The question it left unanswered and the next one become one user turn, so that roles still alternate
        // (many templates refuse two user turns in a row).
        const bool question = m.role == QLatin1String("user");
        if (question && !request.messages.empty() && request.messages.back()["role"] == "user") {
            appendToQuestion(request.messages.back()["content"], questionContent(m, options, images));
            continue;
        }
        // Without sendImages, images stay with the conversation and the model reads only the text.
        nlohmann::ordered_json message = {{"role", m.role.toStdString()},
                                          {"content", question ? questionContent(m, options, images)
                                                               : nlohmann::ordered_json(m.content.toStdString())}};
        if (m.role == QLatin1String("assistant") && options.preserveThinking && !m.reasoning.isEmpty())
            message["reasoning_content"] = m.reasoning.toStdString();
        request.messages.push_back(std::move(message));
    }
    if (options.supportsThinking) request.kwargs["enable_thinking"] = options.enableThinking;
    if (options.preserveThinking) request.kwargs["preserve_thinking"] = true;
    if (options.supportsReasoningEffort) request.kwargs["reasoning_effort"] = options.reasoningEffort.toStdString();
    return request;
}

}  // namespace ember::desktop
