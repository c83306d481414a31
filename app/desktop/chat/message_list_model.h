// SPDX-License-Identifier: MIT
// The messages of the shown branch of a conversation, one row each. A row carries the message's role, state,
// statistics and its branch position ("2 of 3"), and a MessageBlockModel with its blocks. Streaming goes to the
// block model of the last row only; this model does not change while text streams, so the message list never
// re-lays out for a token.
#pragma once

#include <QHash>
#include <QPointer>
#include <QtQml/qqmlregistration.h>

#include "conversation_tree.h"
#include "message_block_model.h"
#include "ui/counted_list_model.h"

namespace ember::desktop {

class MessageListModel : public CountedListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("The chat controller owns the message list")

public:
    enum Role {
        MessageIdRole = Qt::UserRole + 1,
        RoleRole,  // "user" or "assistant"
        StateRole,  // complete, streaming, stopped, failed, interrupted
        ErrorRole,
        StatsRole,
        BlocksRole,
        SiblingIndexRole,  // 1-based
        SiblingCountRole,
        IsLastRole,
        ContentRole,
        ModelNameRole,
        CreatedMsRole,
        AttachmentCountRole,
    };

    using CountedListModel::CountedListModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    // Shows the tree's current path; keeps the rows (and their block models) of the common prefix.
    void sync(const ConversationTree& tree, const QString& streamingId = {});
    // The message's fields changed (not its text while streaming): state, statistics, error.
    void refresh(const ConversationTree& tree, const QString& id);
    void clear();

    MessageBlockModel* blocks(const QString& id);
    int rowOf(const QString& id) const { return static_cast<int>(m_ids.indexOf(id)); }
    QString idAt(int row) const { return row >= 0 && row < m_ids.size() ? m_ids[row] : QString(); }
    const QStringList& ids() const { return m_ids; }

private:
    struct Row {
        ChatMessage message;  // a copy of the tree's message as last synced (text may lag while streaming)
        int siblingIndex = 1;
        int siblingCount = 1;
    };
    Row makeRow(const ConversationTree& tree, const QString& id) const;

    QStringList m_ids;
    QList<Row> m_rows;
    QHash<QString, MessageBlockModel*> m_blocks;  // owned (children of this model)
};

}  // namespace ember::desktop
