// SPDX-License-Identifier: MIT
// A conversation's data as the app keeps and stores it: messages with their parent (which makes the branches of
// regenerate and edit), reasoning, images, statistics and state. Plain values, shared by the chat models and the
// storage thread.
#pragma once

#include <QByteArray>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QVariantMap>

namespace ember::desktop {

struct Attachment {
    QString id;
    QString name;
    QString mimeType;
    QByteArray data;  // the file's bytes as attached
};

namespace message_state {
inline const QString complete = QStringLiteral("complete");
inline const QString streaming = QStringLiteral("streaming");  // in flight; on disk after a crash: interrupted
inline const QString stopped = QStringLiteral("stopped");
inline const QString failed = QStringLiteral("failed");
inline const QString interrupted = QStringLiteral("interrupted");  // shown, never stored
}  // namespace message_state

struct ChatMessage {
    QString id;
    QString parentId;  // empty for a first message
    QString role;      // "user" or "assistant"
    QString content;
    QString reasoning;
    QString state = message_state::complete;
    QString error;
    QVariantMap stats;  // TurnStats::toVariantMap
    qint64 thinkingMs = 0;
    qint64 createdMs = 0;  // milliseconds since the epoch
    QString model;         // which model wrote an assistant message
    QList<Attachment> attachments;
};

struct ConversationInfo {
    QString id;
    QString title;
    qint64 createdMs = 0;
    qint64 updatedMs = 0;
    bool thinkingEnabled = true;
    QString activeLeaf;  // the message whose branch is shown
};

}  // namespace ember::desktop

Q_DECLARE_METATYPE(ember::desktop::ChatMessage)
Q_DECLARE_METATYPE(ember::desktop::ConversationInfo)
