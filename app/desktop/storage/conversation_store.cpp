// SPDX-License-Identifier: MIT
#include "conversation_store.h"

namespace ember::desktop {

ConversationStore::ConversationStore(QObject* parent) : StorageEvents(parent), m_worker(new StorageWorker) {
    m_thread.setObjectName(QStringLiteral("ember-storage"));
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(m_worker, &StorageEvents::opened, this, [this](bool ok) { m_open = ok; });  // before it is forwarded
    forwardFrom(m_worker);
    m_thread.start();
}

ConversationStore::~ConversationStore() {
    // Queued saves run before the quit request, which is queued after them; then the connection closes.
    post([w = m_worker] { w->close(); });
    post([t = &m_thread] { t->quit(); });
    m_thread.wait();
}

void ConversationStore::open(const QString& path) {
    m_path = path;
    post([w = m_worker, path] { w->open(path); });
}

void ConversationStore::saveConversation(const ConversationInfo& info) {
    post([w = m_worker, info] { w->saveConversation(info); });
}

void ConversationStore::saveMessage(const QString& conversationId, const ChatMessage& message) {
    post([w = m_worker, conversationId, message] { w->saveMessage(conversationId, message); });
}

void ConversationStore::deleteConversation(const QString& id) {
    post([w = m_worker, id] { w->deleteConversation(id); });
}

quint64 ConversationStore::listConversations(const QString& filter) {
    const quint64 request = m_nextRequest++;
    post([w = m_worker, request, filter] { w->listConversations(request, filter); });
    return request;
}

quint64 ConversationStore::loadConversation(const QString& id) {
    const quint64 request = m_nextRequest++;
    post([w = m_worker, request, id] { w->loadConversation(request, id); });
    return request;
}

}  // namespace ember::desktop
