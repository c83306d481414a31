// SPDX-License-Identifier: MIT
// Images waiting in the composer: thumbnails to show (and remove) before the message is sent.
#pragma once

#include <QtQml/qqmlregistration.h>

#include "chat_message.h"
#include "ui/counted_list_model.h"

namespace ember::desktop {

class AttachmentListModel : public CountedListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("The chat controller owns the composer's attachments")

public:
    enum Role { IdRole = Qt::UserRole + 1, NameRole, SourceRole };

    using CountedListModel::CountedListModel;
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    void add(const Attachment& attachment);
    Q_INVOKABLE void remove(int row);
    QList<Attachment> takeAll();
    const QList<Attachment>& items() const { return m_items; }

private:
    QList<Attachment> m_items;
};

}  // namespace ember::desktop
