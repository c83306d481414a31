// SPDX-License-Identifier: MIT
#include "conversation_list_model.h"

namespace ember::desktop {

int ConversationListModel::rowCount(const QModelIndex& parent) const { return listRowCount(parent, m_items); }

QHash<int, QByteArray> ConversationListModel::roleNames() const {
    return {{IdRole, "conversationId"},
            {TitleRole, "title"},
            {UpdatedMsRole, "updatedMs"},
            {CreatedMsRole, "createdMs"},
            {ThinkingEnabledRole, "thinkingEnabled"}};
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
    const ConversationInfo* c = rowAt(index, m_items);
    if (!c) return {};
    switch (role) {
        case IdRole: return c->id;
        case TitleRole:
        case Qt::DisplayRole: return c->title;
        case UpdatedMsRole: return c->updatedMs;
        case CreatedMsRole: return c->createdMs;
        case ThinkingEnabledRole: return c->thinkingEnabled;
        default: return {};
    }
}

void ConversationListModel::setConversations(const QList<ConversationInfo>& list, const QString& filter) {
    resetListRows(m_items, list);
    if (filter != m_filter) {
        m_filter = filter;
        Q_EMIT filterChanged();
    }
}

int ConversationListModel::rowOf(const QString& id) const {
    for (qsizetype i = 0; i < m_items.size(); ++i)
        if (m_items[i].id == id) return static_cast<int>(i);
    return -1;
}

QString ConversationListModel::idAt(int row) const {
    return row >= 0 && row < m_items.size() ? m_items[row].id : QString();
}

QString ConversationListModel::titleAt(int row) const {
    return row >= 0 && row < m_items.size() ? m_items[row].title : QString();
}

void ConversationListModel::upsert(const ConversationInfo& info) {
    const int row = rowOf(info.id);
    if (row > 0 && info.updatedMs > m_items[row].updatedMs) {  // newer activity: to the top
        beginMoveRows({}, row, row, {}, 0);
        m_items.move(row, 0);
        endMoveRows();
        m_items[0] = info;
        Q_EMIT dataChanged(index(0), index(0));
    } else if (row >= 0) {
        m_items[row] = info;
        Q_EMIT dataChanged(index(row), index(row));
    } else if (m_filter.isEmpty() || info.title.contains(m_filter, Qt::CaseInsensitive)) {
        insertListRow(m_items, 0, info);
    }
}

void ConversationListModel::remove(const QString& id) {
    removeListRow(m_items, rowOf(id));
}

}  // namespace ember::desktop
