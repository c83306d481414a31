// SPDX-License-Identifier: MIT
// The SQLite side of conversation storage, living on the storage thread with its own connection. Every call
// arrives queued from the GUI thread; results go back as signals. Each save is one transaction, so what a killed
// process leaves behind is every save that completed.
#pragma once

#include <QHash>
#include <QImage>
#include <QList>
#include <QObject>
#include <QSqlDatabase>

#include "chat/chat_message.h"

namespace ember::desktop {

struct LoadedConversation {
    bool found = false;
    ConversationInfo info;
    QList<ChatMessage> messages;        // in creation order
    QHash<QString, QImage> thumbnails;  // attachment id -> scaled image, decoded here and not on the GUI thread
};

inline constexpr int kThumbnailSize = 512;

class StorageWorker : public QObject {
    Q_OBJECT
public:
    explicit StorageWorker(QObject* parent = nullptr);
    ~StorageWorker() override;

    void open(const QString& path);
    void close();
    void saveConversation(const ConversationInfo& info);
    void saveMessage(const QString& conversationId, const ChatMessage& message);
    void deleteConversation(const QString& id);
    void listConversations(quint64 request, const QString& filter);
    void loadConversation(quint64 request, const QString& id);

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

private:
    bool ready();
    bool writable();  // ready, and not read-only
    void fail(const QString& what, const QString& why);
    bool openConnection(const QString& path, bool readOnly, QString* error);
    bool openWritable(const QString& path, QString* error);
    bool openReadOnly(const QString& path, QString* error);
    bool recover(const QString& path, const QString& damage, QString* error);

    QString m_connection;
    bool m_open = false;
    bool m_readOnly = false;
};

}  // namespace ember::desktop

Q_DECLARE_METATYPE(ember::desktop::LoadedConversation)
