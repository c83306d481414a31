// SPDX-License-Identifier: MIT
#include "conversation_export.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

namespace ember::desktop {

namespace {

QString isoTime(qint64 ms) {
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(Qt::ISODateWithMs);
}

}  // namespace

QString conversationToMarkdown(const ConversationInfo& info, const QList<ChatMessage>& branch) {
    QString out = QStringLiteral("# ") + info.title + QStringLiteral("\n\n");
    for (const ChatMessage& m : branch) {
        const bool user = m.role == QLatin1String("user");
        out += user ? QStringLiteral("## You\n\n") : QStringLiteral("## Assistant\n\n");
        if (!m.reasoning.isEmpty()) {
            out += QStringLiteral("<details><summary>Thinking (%1 s)</summary>\n\n")
                       .arg(static_cast<double>(m.thinkingMs) / 1000.0, 0, 'f', 1);
            out += m.reasoning.trimmed() + QStringLiteral("\n\n</details>\n\n");
        }
        for (const Attachment& a : m.attachments) out += QStringLiteral("![%1](%1)\n\n").arg(a.name);
        out += m.content.trimmed() + QStringLiteral("\n\n");
        if (m.state == message_state::stopped) out += QStringLiteral("*(stopped)*\n\n");
        if (m.state == message_state::failed) out += QStringLiteral("*(failed: %1)*\n\n").arg(m.error);
    }
    return out;
}

QByteArray conversationToJson(const ConversationInfo& info, const QList<ChatMessage>& allMessages) {
    QJsonArray messages;
    for (const ChatMessage& m : allMessages) {
        QJsonArray attachments;
        for (const Attachment& a : m.attachments)
            attachments.append(QJsonObject{{QStringLiteral("id"), a.id},
                                           {QStringLiteral("name"), a.name},
                                           {QStringLiteral("mime_type"), a.mimeType},
                                           {QStringLiteral("data_base64"), QString::fromLatin1(a.data.toBase64())}});
        messages.append(QJsonObject{
            {QStringLiteral("id"), m.id},
            {QStringLiteral("parent_id"), m.parentId.isEmpty() ? QJsonValue() : QJsonValue(m.parentId)},
            {QStringLiteral("role"), m.role},
            {QStringLiteral("content"), m.content},
            {QStringLiteral("reasoning"), m.reasoning},
            {QStringLiteral("state"), m.state},
            {QStringLiteral("error"), m.error},
            {QStringLiteral("created"), isoTime(m.createdMs)},
            {QStringLiteral("thinking_ms"), m.thinkingMs},
            {QStringLiteral("model"), m.model},
            {QStringLiteral("stats"), QJsonObject::fromVariantMap(m.stats)},
            {QStringLiteral("attachments"), attachments},
        });
    }
    const QJsonObject root{
        {QStringLiteral("format"), QStringLiteral("ember-conversation")},
        {QStringLiteral("version"), 1},
        {QStringLiteral("id"), info.id},
        {QStringLiteral("title"), info.title},
        {QStringLiteral("created"), isoTime(info.createdMs)},
        {QStringLiteral("updated"), isoTime(info.updatedMs)},
        {QStringLiteral("thinking_enabled"), info.thinkingEnabled},
        {QStringLiteral("active_leaf"), info.activeLeaf},
        {QStringLiteral("messages"), messages},
    };
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

QString writeExport(const QString& path, const QByteArray& bytes) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return path + QStringLiteral(": cannot write: ") + file.errorString();
    file.write(bytes);
    if (!file.commit()) return path + QStringLiteral(": cannot write: ") + file.errorString();
    return {};
}

}  // namespace ember::desktop
