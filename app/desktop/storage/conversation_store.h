// SPDX-License-Identifier: MIT
// Conversation storage as the GUI thread uses it: every call returns at once and is carried out in order on the
// storage thread (a StorageWorker with its own SQLite connection); results come back as signals. The GUI thread
// never waits for the disk.
#pragma once

#include <QObject>
#include <QThread>

#include "storage_worker.h"

namespace ember::desktop {

class ConversationStore : public StorageEvents {
    Q_OBJECT
public:
    explicit ConversationStore(QObject* parent = nullptr);
    ~ConversationStore() override;  // finishes the queued writes, then closes the database

    void open(const QString& path);
    void saveConversation(const ConversationInfo& info);
    void saveMessage(const QString& conversationId, const ChatMessage& message);
    void deleteConversation(const QString& id);
    quint64 listConversations(const QString& filter = {});
    quint64 loadConversation(const QString& id);
    bool isOpen() const { return m_open; }
    QString path() const { return m_path; }

private:
    template <typename F>
    void post(F&& call) {
        QMetaObject::invokeMethod(m_worker, std::forward<F>(call), Qt::QueuedConnection);
    }

    QThread m_thread;
    StorageWorker* m_worker;
    quint64 m_nextRequest = 1;
    bool m_open = false;
    QString m_path;
};

}  // namespace ember::desktop
