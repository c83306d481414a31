// SPDX-License-Identifier: MIT
#include "message_list_model.h"

namespace ember::desktop {

int MessageListModel::rowCount(const QModelIndex& parent) const { return listRowCount(parent, m_rows); }

QHash<int, QByteArray> MessageListModel::roleNames() const {
    return {{MessageIdRole, "messageId"},     {RoleRole, "role"},
            {StateRole, "messageState"},      {ErrorRole, "error"},
            {StatsRole, "stats"},             {BlocksRole, "blocks"},
            {SiblingIndexRole, "siblingIndex"}, {SiblingCountRole, "siblingCount"},
            {IsLastRole, "isLast"},           {ContentRole, "content"},
            {ModelNameRole, "modelName"},     {CreatedMsRole, "createdMs"},
            {AttachmentCountRole, "attachmentCount"}};
}

QVariant MessageListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= m_rows.size()) return {};
    const Row& r = m_rows[index.row()];
    const ChatMessage& m = r.message;
    switch (role) {
        case MessageIdRole: return m.id;
        case RoleRole: return m.role;
        case StateRole: return m.state;
        case ErrorRole: return m.error;
        case StatsRole: return m.stats;
        case BlocksRole: return QVariant::fromValue(static_cast<QObject*>(m_blocks.value(m.id)));
        case SiblingIndexRole: return r.siblingIndex;
        case SiblingCountRole: return r.siblingCount;
        case IsLastRole: return index.row() == m_rows.size() - 1;
        case ContentRole: return m.content;
        case ModelNameRole: return m.model;
        case CreatedMsRole: return m.createdMs;
        case AttachmentCountRole: return static_cast<int>(m.attachments.size());
        default: return {};
    }
}

MessageListModel::Row MessageListModel::makeRow(const ConversationTree& tree, const QString& id) const {
    Row r;
    if (const ChatMessage* m = tree.message(id)) r.message = *m;
    const QStringList siblings = tree.siblings(id);
    r.siblingCount = static_cast<int>(std::max<qsizetype>(1, siblings.size()));
    r.siblingIndex = static_cast<int>(siblings.indexOf(id) + 1);
    return r;
}

MessageBlockModel* MessageListModel::blocks(const QString& id) {
    return m_blocks.value(id);
}

void MessageListModel::sync(const ConversationTree& tree, const QString& streamingId) {
    const QStringList path = tree.path();
    const qsizetype before = m_ids.size();
    qsizetype common = 0;
    while (common < path.size() && common < m_ids.size() && path[common] == m_ids[common]) ++common;

    if (common < m_ids.size()) {
        beginRemoveRows({}, static_cast<int>(common), static_cast<int>(m_ids.size() - 1));
        // Delegates may still hold a block model until they are destroyed: delete it later.
        for (qsizetype i = common; i < m_ids.size(); ++i) m_blocks.take(m_ids[i])->deleteLater();
        m_ids.resize(common);
        m_rows.resize(common);
        endRemoveRows();
    }
    // The former last row is no longer last; sibling counts of kept rows may have grown (a new branch).
    for (qsizetype i = 0; i < common; ++i) {
        const Row fresh = makeRow(tree, m_ids[i]);
        if (fresh.siblingCount != m_rows[i].siblingCount || i == common - 1) {
            m_rows[i].siblingCount = fresh.siblingCount;
            m_rows[i].siblingIndex = fresh.siblingIndex;
            Q_EMIT dataChanged(index(static_cast<int>(i)), index(static_cast<int>(i)),
                               {SiblingIndexRole, SiblingCountRole, IsLastRole});
        }
    }
    if (common < path.size()) {
        beginInsertRows({}, static_cast<int>(common), static_cast<int>(path.size() - 1));
        for (qsizetype i = common; i < path.size(); ++i) {
            Row r = makeRow(tree, path[i]);
            auto* blocks = new MessageBlockModel(this);
            blocks->reset(r.message, path[i] == streamingId);
            m_blocks.insert(path[i], blocks);
            m_ids.append(path[i]);
            m_rows.append(r);
        }
        endInsertRows();
    }
    if (m_ids.size() != before) Q_EMIT countChanged();
}

void MessageListModel::refresh(const ConversationTree& tree, const QString& id) {
    const int row = rowOf(id);
    if (row < 0) return;
    m_rows[row] = makeRow(tree, id);
    Q_EMIT dataChanged(index(row), index(row));
}

void MessageListModel::clear() {
    beginResetModel();
    for (MessageBlockModel* b : std::as_const(m_blocks)) b->deleteLater();
    m_blocks.clear();
    m_ids.clear();
    m_rows.clear();
    endResetModel();
    Q_EMIT countChanged();
}

}  // namespace ember::desktop
