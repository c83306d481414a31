// SPDX-License-Identifier: MIT
// The messages of one conversation as a tree: regenerating an answer or editing a question adds a sibling instead
// of replacing anything, so every earlier branch stays reachable. The conversation shows one path, from a root
// to the active leaf.
#pragma once

#include <QHash>
#include <QStringList>

#include "chat_message.h"

namespace ember::desktop {

class ConversationTree {
public:
    void clear();
    // Adds a message under its parent (after its existing siblings). The parent must be in the tree or empty.
    void insert(const ChatMessage& message);
    bool contains(const QString& id) const { return m_messages.contains(id); }
    ChatMessage* message(const QString& id);
    const ChatMessage* message(const QString& id) const;
    qsizetype size() const { return m_messages.size(); }

    QString activeLeaf() const { return m_leaf; }
    void setActiveLeaf(const QString& id);
    // Root-to-leaf ids of the shown branch.
    QStringList path() const;
    // The message's siblings (itself included) in creation order.
    QStringList siblings(const QString& id) const;
    QStringList children(const QString& id) const { return m_children.value(id); }
    // The newest descendant reached by always taking the newest child.
    QString newestLeafUnder(const QString& id) const;
    // Shows the sibling `delta` places away from `id` (and that sibling's newest branch). False at either end.
    bool selectSibling(const QString& id, int delta);
    // Every message, parents before children.
    QList<ChatMessage> all() const;

private:
    QHash<QString, ChatMessage> m_messages;
    QHash<QString, QStringList> m_children;  // parent id ("" for roots) -> child ids in creation order
    QString m_leaf;
};

}  // namespace ember::desktop
