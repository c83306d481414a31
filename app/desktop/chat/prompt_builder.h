// SPDX-License-Identifier: MIT
// Turns the shown branch of a conversation into the engine's RenderRequest: the system prompt, each message in
// the OpenAI/Hugging Face shape, and the template switches. Past reasoning goes back as reasoning_content only
// when the template can write it (preserve_thinking): the re-rendered prompt then matches what the model
// generated, and the session reuses its cache instead of recomputing the conversation.
#pragma once

#include <QList>

#include "chat_message.h"
#include "ember/chat.h"
#include "inference/engine_types.h"

namespace ember::desktop {

struct PromptOptions {
    QString systemPrompt;
    bool supportsThinking = false;  // the template reads enable_thinking
    bool enableThinking = true;
    bool preserveThinking = false;  // the template reads preserve_thinking
    bool supportsReasoningEffort = false;      // the template reads reasoning_effort (gpt-oss)
    QString reasoningEffort = QStringLiteral("medium");  // low, medium or high
    bool sendImages = false;        // the model reads images: a question's images go as content parts
};

// With sendImages, a question with images has the content parts [{"type": "image"}..., {"type": "text"}], and
// `images` receives the images in the order of their parts in the conversation.
chat::RenderRequest buildRenderRequest(const QList<ChatMessage>& branch, const PromptOptions& options,
                                       QList<TurnImage>* images = nullptr);

}  // namespace ember::desktop
