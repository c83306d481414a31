// SPDX-License-Identifier: MIT
#include "prompt_builder.h"

namespace ember::desktop {

chat::RenderRequest buildRenderRequest(const QList<ChatMessage>& branch, const PromptOptions& options) {
    chat::RenderRequest request;
    if (!options.systemPrompt.trimmed().isEmpty())
        request.messages.push_back({{"role", "system"}, {"content", options.systemPrompt.toStdString()}});
    for (const ChatMessage& m : branch) {
        // A reply that failed, was stopped or was interrupted before it wrote any answer says nothing the model
        // should read back: an empty assistant turn would teach it to answer with nothing.
        if (m.role == QLatin1String("assistant") && m.content.isEmpty() && m.state != message_state::complete) continue;
        // The question it left unanswered and the next one become one user turn, so that roles still alternate
        // (many templates refuse two user turns in a row).
        if (m.role == QLatin1String("user") && !request.messages.empty() && request.messages.back()["role"] == "user" &&
            request.messages.back()["content"].is_string()) {
            request.messages.back()["content"] =
                request.messages.back()["content"].get<std::string>() + "\n\n" + m.content.toStdString();
            continue;
        }
        // Images are stored with the conversation but not sent: the engine has no vision projector yet.
        nlohmann::ordered_json message = {{"role", m.role.toStdString()}, {"content", m.content.toStdString()}};
        if (m.role == QLatin1String("assistant") && options.preserveThinking && !m.reasoning.isEmpty())
            message["reasoning_content"] = m.reasoning.toStdString();
        request.messages.push_back(std::move(message));
    }
    if (options.supportsThinking) request.kwargs["enable_thinking"] = options.enableThinking;
    if (options.preserveThinking) request.kwargs["preserve_thinking"] = true;
    return request;
}

}  // namespace ember::desktop
