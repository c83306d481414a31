// SPDX-License-Identifier: MIT
// The typed blocks of one message, one row per block, one QML delegate per kind: "thinking" (the reasoning,
// collapsible, with its time), "image" (an attachment), "text" (Markdown) and "code" (with its language). While a
// message streams, new text changes only the last block's row or appends a row, so the view re-lays out one
// block per token, never the message.
#pragma once

#include <QtQml/qqmlregistration.h>

#include "block_splitter.h"
#include "chat_message.h"
#include "ui/counted_list_model.h"

namespace ember::desktop {

class MessageBlockModel : public CountedListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Blocks belong to a message")

public:
    enum Role {
        KindRole = Qt::UserRole + 1,
        TextRole,
        LanguageRole,
        ClosedRole,  // no more text will arrive in the block
        ExpandedRole,
        ThinkingMsRole,         // thinking: the time it took (while thinking: 0)
        ThinkingStartedMsRole,  // thinking: when it started (epoch ms), for a live clock
        ImageSourceRole,
        ImageNameRole,
    };

    using CountedListModel::CountedListModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;
    QHash<int, QByteArray> roleNames() const override;

    // Rebuilds from a stored or finished message.
    void reset(const ChatMessage& message, bool streaming = false);
    void appendReasoning(const QString& text, qint64 nowMs);
    // The first answer text ends the thinking: its time is fixed and the block folds itself.
    void appendContent(const QString& text, qint64 nowMs);
    void finish(qint64 nowMs);

    Q_INVOKABLE QString kindAt(int row) const;
    Q_INVOKABLE QString textAt(int row) const;
    Q_INVOKABLE void setExpanded(int row, bool expanded);
    bool thinkingExpanded() const { return m_thinkingExpanded; }
    qint64 thinkingMs() const { return m_thinkingMs; }

private:
    int imageRow(int i) const { return (m_hasThinking ? 1 : 0) + i; }
    int contentRow(qsizetype i) const { return (m_hasThinking ? 1 : 0) + static_cast<int>(m_images.size() + i); }
    void ensureThinking(qint64 nowMs);
    void endThinking(qint64 nowMs);
    void applyChange(const BlockSplitter::Change& change);

    bool m_hasThinking = false;
    QString m_reasoning;
    qint64 m_thinkingStartedMs = 0;
    qint64 m_thinkingMs = 0;
    bool m_thinkingDone = true;
    bool m_thinkingExpanded = false;
    bool m_userToggled = false;
    QList<Attachment> m_images;  // bytes not used here: rows show image://ember/<id>
    BlockSplitter m_splitter;
    qsizetype m_shownBlocks = 0;  // splitter blocks the model has announced
};

}  // namespace ember::desktop
