// SPDX-License-Identifier: MIT
#include "conversation_tree.h"

#include <algorithm>

namespace ember::desktop {

void ConversationTree::clear() {
    m_messages.clear();
    m_children.clear();
    m_leaf.clear();
}

void ConversationTree::insert(const ChatMessage& message) {
    if (m_messages.contains(message.id)) {
        m_messages[message.id] = message;
        return;
    }
    // A parent that is missing (a damaged file) makes the message a root rather than losing it.
    const QString parent = m_messages.contains(message.parentId) ? message.parentId : QString();
    ChatMessage m = message;
    m.parentId = parent;
    m_messages.insert(m.id, m);
    m_children[parent].append(m.id);
}

ChatMessage* ConversationTree::message(const QString& id) {
    auto it = m_messages.find(id);
    return it == m_messages.end() ? nullptr : &*it;
}

const ChatMessage* ConversationTree::message(const QString& id) const {
    auto it = m_messages.constFind(id);
    return it == m_messages.constEnd() ? nullptr : &*it;
}

void ConversationTree::setActiveLeaf(const QString& id) {
    m_leaf = m_messages.contains(id) ? id : QString();
}

QStringList ConversationTree::path() const {
    QStringList ids;
    QString id = m_leaf;
    while (!id.isEmpty() && ids.size() <= m_messages.size()) {  // the bound guards against a cycle in bad data
        ids.append(id);
        id = m_messages.value(id).parentId;
    }
    std::reverse(ids.begin(), ids.end());
    return ids;
}

QStringList ConversationTree::siblings(const QString& id) const {
    const auto it = m_messages.constFind(id);
    if (it == m_messages.constEnd()) return {};
    return m_children.value(it->parentId);
}

QString ConversationTree::newestLeafUnder(const QString& id) const {
    QString leaf = id;
    for (qsizetype steps = 0; steps <= m_messages.size(); ++steps) {
        const QStringList kids = m_children.value(leaf);
        if (kids.isEmpty()) break;
        leaf = kids.last();
    }
    return leaf;
}

bool ConversationTree::selectSibling(const QString& id, int delta) {
    const QStringList list = siblings(id);
    const qsizetype at = list.indexOf(id);
    const qsizetype to = at + delta;
    if (at < 0 || to < 0 || to >= list.size()) return false;
    m_leaf = newestLeafUnder(list[to]);
    return true;
}

QList<ChatMessage> ConversationTree::all() const {
    QList<ChatMessage> out;
    QStringList queue = m_children.value(QString());
    for (qsizetype i = 0; i < queue.size(); ++i) {
        out.append(m_messages.value(queue[i]));
        queue.append(m_children.value(queue[i]));
    }
    return out;
}

}  // namespace ember::desktop
