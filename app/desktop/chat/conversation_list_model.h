// SPDX-License-Identifier: MIT
// The sidebar's conversations, newest activity first: all of them, or those a search matched (by title or by
// the text of any message, searched on the storage thread).
#pragma once

#include <QtQml/qqmlregistration.h>

#include "chat_message.h"
#include "ui/counted_list_model.h"

namespace ember::desktop {

class ConversationListModel : public CountedListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("The chat controller owns the conversation list")
    Q_PROPERTY(QString filter READ filter NOTIFY filterChanged)

public:
    enum Role { IdRole = Qt::UserRole + 1, TitleRole, UpdatedMsRole, CreatedMsRole, ThinkingEnabledRole };

    using CountedListModel::CountedListModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;
    QString filter() const { return m_filter; }

    void setConversations(const QList<ConversationInfo>& list, const QString& filter);
    // Adds or updates a conversation and moves it to the top (when it matches the filter or is new).
    void upsert(const ConversationInfo& info);
    void remove(const QString& id);
    int rowOf(const QString& id) const;
    Q_INVOKABLE QString idAt(int row) const;
    Q_INVOKABLE QString titleAt(int row) const;
    const QList<ConversationInfo>& conversations() const { return m_items; }

Q_SIGNALS:
    void filterChanged();

private:
    QList<ConversationInfo> m_items;
    QString m_filter;
};

}  // namespace ember::desktop
