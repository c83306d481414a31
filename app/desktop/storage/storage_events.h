// SPDX-License-Identifier: MIT
// The results of conversation storage as signals, declared once: the StorageWorker emits them on the storage
// thread and the ConversationStore emits them again on the GUI thread (forwardFrom).
#pragma once

#include <QHash>
#include <QImage>
#include <QList>
#include <QObject>

#include "chat/chat_message.h"

namespace ember::desktop {

struct LoadedConversation {
    bool found = false;
    ConversationInfo info;
    QList<ChatMessage> messages;        // in creation order
    QHash<QString, QImage> thumbnails;  // attachment id -> scaled image, decoded here and not on the GUI thread
};

class StorageEvents : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

    // Emits every signal below again whenever `source` emits it (queued when `source` lives on another thread).
    void forwardFrom(StorageEvents* source);

Q_SIGNALS:
    // Before opened: the history opened read-only (a read-only file or folder); `reason` says why. Saves are then
    // skipped: the GUI says that new chats will not be kept.
    void readOnly(const QString& reason);
    // Before opened: the file was damaged, moved to `movedTo`, and `summary` says what was recovered from it.
    void recovered(const QString& movedTo, const QString& summary);
    void opened(bool ok, const QString& error);
    void listed(quint64 request, const QList<ember::desktop::ConversationInfo>& conversations);
    void loaded(quint64 request, const ember::desktop::LoadedConversation& conversation);
    void messageSaved(const QString& messageId, const QString& state, int contentLength);
    void failed(const QString& error);
};

}  // namespace ember::desktop

Q_DECLARE_METATYPE(ember::desktop::LoadedConversation)
