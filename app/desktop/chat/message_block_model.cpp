// SPDX-License-Identifier: MIT
#include "message_block_model.h"

#include <algorithm>

namespace ember::desktop {

int MessageBlockModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid()) return 0;
    return (m_hasThinking ? 1 : 0) + static_cast<int>(m_images.size() + m_shownBlocks);
}

QHash<int, QByteArray> MessageBlockModel::roleNames() const {
    return {{KindRole, "kind"},
            {TextRole, "text"},
            {LanguageRole, "language"},
            {ClosedRole, "closed"},
            {ExpandedRole, "expanded"},
            {ThinkingMsRole, "thinkingMs"},
            {ThinkingStartedMsRole, "thinkingStartedMs"},
            {ImageSourceRole, "imageSource"},
            {ImageNameRole, "imageName"}};
}

QVariant MessageBlockModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    int row = index.row();
    if (m_hasThinking) {
        if (row == 0) {
            switch (role) {
                case KindRole: return QStringLiteral("thinking");
                case TextRole: return m_reasoning;
                case ClosedRole: return m_thinkingDone;
                case ExpandedRole: return m_thinkingExpanded;
                case ThinkingMsRole: return m_thinkingMs;
                case ThinkingStartedMsRole: return m_thinkingStartedMs;
                default: return {};
            }
        }
        --row;
    }
    if (row < m_images.size()) {
        const Attachment& a = m_images[row];
        switch (role) {
            case KindRole: return QStringLiteral("image");
            case ImageSourceRole: return QStringLiteral("image://ember/") + a.id;
            case ImageNameRole: return a.name;
            case TextRole: return a.name;
            case ClosedRole: return true;
            default: return {};
        }
    }
    const TextBlock& b = m_splitter.blocks()[row - m_images.size()];
    switch (role) {
        case KindRole: return b.kind == TextBlock::Kind::Code ? QStringLiteral("code") : QStringLiteral("text");
        case TextRole: return b.text;
        case LanguageRole: return b.language;
        case ClosedRole: return b.closed;
        default: return {};
    }
}

bool MessageBlockModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != ExpandedRole || !index.isValid() || !m_hasThinking || index.row() != 0) return false;
    setExpanded(0, value.toBool());
    return true;
}

QString MessageBlockModel::kindAt(int row) const {
    return data(index(row), KindRole).toString();
}

QString MessageBlockModel::textAt(int row) const {
    return data(index(row), TextRole).toString();
}

void MessageBlockModel::setExpanded(int row, bool expanded) {
    if (!m_hasThinking || row != 0 || m_thinkingExpanded == expanded) return;
    m_thinkingExpanded = expanded;
    m_userToggled = true;
    Q_EMIT dataChanged(index(0), index(0), {ExpandedRole});
}

void MessageBlockModel::reset(const ChatMessage& message, bool streaming) {
    beginResetModel();
    m_reasoning = message.reasoning;
    m_hasThinking = !m_reasoning.isEmpty();
    m_thinkingMs = message.thinkingMs;
    m_thinkingStartedMs = message.createdMs;
    m_thinkingDone = !streaming || !message.content.isEmpty();
    m_thinkingExpanded = streaming && !m_thinkingDone;
    m_userToggled = false;
    m_images = message.attachments;
    m_splitter = BlockSplitter();
    m_splitter.append(message.content);
    if (!streaming) m_splitter.finish();
    m_shownBlocks = m_splitter.count();
    endResetModel();
    Q_EMIT countChanged();
}

void MessageBlockModel::ensureThinking(qint64 nowMs) {
    if (m_hasThinking) return;
    beginInsertRows({}, 0, 0);
    m_hasThinking = true;
    m_thinkingStartedMs = nowMs;
    m_thinkingDone = false;
    m_thinkingExpanded = true;
    endInsertRows();
    Q_EMIT countChanged();
}

void MessageBlockModel::endThinking(qint64 nowMs) {
    if (!m_hasThinking || m_thinkingDone) return;
    m_thinkingDone = true;
    m_thinkingMs = std::max<qint64>(0, nowMs - m_thinkingStartedMs);
    if (!m_userToggled) m_thinkingExpanded = false;
    Q_EMIT dataChanged(index(0), index(0), {ClosedRole, ThinkingMsRole, ExpandedRole});
}

void MessageBlockModel::appendReasoning(const QString& text, qint64 nowMs) {
    if (text.isEmpty()) return;
    ensureThinking(nowMs);
    m_reasoning += text;
    Q_EMIT dataChanged(index(0), index(0), {TextRole});
}

void MessageBlockModel::appendContent(const QString& text, qint64 nowMs) {
    if (text.isEmpty()) return;
    endThinking(nowMs);
    applyChange(m_splitter.append(text));
}

void MessageBlockModel::finish(qint64 nowMs) {
    endThinking(nowMs);
    applyChange(m_splitter.finish());
}

void MessageBlockModel::applyChange(const BlockSplitter::Change& change) {
    if (change.firstChanged < m_shownBlocks)
        Q_EMIT dataChanged(index(contentRow(change.firstChanged)), index(contentRow(m_shownBlocks - 1)),
                           {TextRole, ClosedRole, LanguageRole});
    // The splitter already holds the new blocks; the model shows them from here on.
    if (m_splitter.count() > m_shownBlocks) {
        beginInsertRows({}, contentRow(m_shownBlocks), contentRow(m_splitter.count() - 1));
        m_shownBlocks = m_splitter.count();
        endInsertRows();
        Q_EMIT countChanged();
    }
}

}  // namespace ember::desktop
