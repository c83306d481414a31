// SPDX-License-Identifier: MIT
// The SQLite side of conversation storage, living on the storage thread with its own connection. Every call
// arrives queued from the GUI thread; results go back as signals. Each save is one transaction, so what a killed
// process leaves behind is every save that completed.
#pragma once

#include <QSqlDatabase>

#include "storage_events.h"

namespace ember::desktop {

inline constexpr int kThumbnailSize = 512;

class StorageWorker : public StorageEvents {
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
