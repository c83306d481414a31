// SPDX-License-Identifier: MIT
#include "attachment_list_model.h"

namespace ember::desktop {

int AttachmentListModel::rowCount(const QModelIndex& parent) const { return listRowCount(parent, m_items); }

QHash<int, QByteArray> AttachmentListModel::roleNames() const {
    return {{IdRole, "attachmentId"}, {NameRole, "name"}, {SourceRole, "source"}};
}

QVariant AttachmentListModel::data(const QModelIndex& index, int role) const {
    const Attachment* a = rowAt(index, m_items);
    if (!a) return {};
    switch (role) {
        case IdRole: return a->id;
        case NameRole: return a->name;
        case SourceRole: return QStringLiteral("image://ember/") + a->id;
        default: return {};
    }
}

void AttachmentListModel::add(const Attachment& attachment) {
    insertListRow(m_items, static_cast<int>(m_items.size()), attachment);
}

void AttachmentListModel::remove(int row) {
    removeListRow(m_items, row);
}

QList<Attachment> AttachmentListModel::takeAll() {
    if (m_items.isEmpty()) return {};
    QList<Attachment> out = m_items;
    resetListRows(m_items, {});
    return out;
}

}  // namespace ember::desktop
