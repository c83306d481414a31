// SPDX-License-Identifier: MIT
// A conversation written out for people (Markdown: the shown branch, reasoning in <details>, images by name)
// and for programs (JSON: every message of every branch with its parent, statistics and images as base64).
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

#include "chat_message.h"

namespace ember::desktop {

QString conversationToMarkdown(const ConversationInfo& info, const QList<ChatMessage>& branch);
QByteArray conversationToJson(const ConversationInfo& info, const QList<ChatMessage>& allMessages);
// Writes `bytes` to `path` atomically; returns an empty string or a one-line error.
QString writeExport(const QString& path, const QByteArray& bytes);

}  // namespace ember::desktop
