// SPDX-License-Identifier: MIT
#include "attachment_list_model.h"

namespace ember::desktop {

AttachmentListModel::AttachmentListModel(QObject* parent) : QAbstractListModel(parent) {}

int AttachmentListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_items.size());
}

QHash<int, QByteArray> AttachmentListModel::roleNames() const {
    return {{IdRole, "attachmentId"}, {NameRole, "name"}, {SourceRole, "source"}};
}

QVariant AttachmentListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= m_items.size()) return {};
    const Attachment& a = m_items[index.row()];
    switch (role) {
        case IdRole: return a.id;
        case NameRole: return a.name;
        case SourceRole: return QStringLiteral("image://ember/") + a.id;
        default: return {};
    }
}

void AttachmentListModel::add(const Attachment& attachment) {
    const int row = static_cast<int>(m_items.size());
    beginInsertRows({}, row, row);
    m_items.append(attachment);
    endInsertRows();
    Q_EMIT countChanged();
}

void AttachmentListModel::remove(int row) {
    if (row < 0 || row >= m_items.size()) return;
    beginRemoveRows({}, row, row);
    m_items.removeAt(row);
    endRemoveRows();
    Q_EMIT countChanged();
}

QList<Attachment> AttachmentListModel::takeAll() {
    if (m_items.isEmpty()) return {};
    beginResetModel();
    QList<Attachment> out = std::move(m_items);
    m_items.clear();
    endResetModel();
    Q_EMIT countChanged();
    return out;
}

}  // namespace ember::desktop
