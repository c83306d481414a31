// SPDX-License-Identifier: MIT
// Images waiting in the composer: thumbnails to show (and remove) before the message is sent.
#pragma once

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

#include "chat_message.h"

namespace ember::desktop {

class AttachmentListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("The chat controller owns the composer's attachments")
    Q_PROPERTY(int count READ count NOTIFY countChanged)

public:
    enum Role { IdRole = Qt::UserRole + 1, NameRole, SourceRole };

    explicit AttachmentListModel(QObject* parent = nullptr);
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;
    int count() const { return rowCount(); }

    void add(const Attachment& attachment);
    Q_INVOKABLE void remove(int row);
    QList<Attachment> takeAll();
    const QList<Attachment>& items() const { return m_items; }

Q_SIGNALS:
    void countChanged();

private:
    QList<Attachment> m_items;
};

}  // namespace ember::desktop
