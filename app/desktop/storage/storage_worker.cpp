// SPDX-License-Identifier: MIT
#include "storage_worker.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <QUuid>

#include "database_salvage.h"
#include "schema.h"

namespace ember::desktop {

Q_LOGGING_CATEGORY(lcStorage, "ember.desktop.storage")

namespace {

QString likePattern(const QString& text) {
    QString escaped = text;
    escaped.replace(QLatin1Char('\\'), QStringLiteral("\\\\"));
    escaped.replace(QLatin1Char('%'), QStringLiteral("\\%"));
    escaped.replace(QLatin1Char('_'), QStringLiteral("\\_"));
    return QLatin1Char('%') + escaped + QLatin1Char('%');
}

QString statsJson(const QVariantMap& stats) {
    return QString::fromUtf8(QJsonDocument(QJsonObject::fromVariantMap(stats)).toJson(QJsonDocument::Compact));
}

// Qt binds a null QString as SQL NULL; text columns are NOT NULL, so an empty text is bound as ''.
QString notNull(const QString& text) {
    return text.isNull() ? QStringLiteral("") : text;
}

QVariantMap statsFromJson(const QString& json) {
    return QJsonDocument::fromJson(json.toUtf8()).object().toVariantMap();
}

const QString kConversationColumns =
    QStringLiteral("c.id, c.title, c.created_at, c.updated_at, c.thinking_enabled, c.active_leaf");

// A row of kConversationColumns.
ConversationInfo conversationFrom(const QSqlQuery& q) {
    ConversationInfo c;
    c.id = q.value(0).toString();
    c.title = q.value(1).toString();
    c.createdMs = q.value(2).toLongLong();
    c.updatedMs = q.value(3).toLongLong();
    c.thinkingEnabled = q.value(4).toBool();
    c.activeLeaf = q.value(5).toString();
    return c;
}

const QString kMessageColumns = QStringLiteral(
    "id, parent_id, role, content, reasoning, state, error, stats, thinking_ms, created_at, model");

// A row of kMessageColumns, without its attachments.
ChatMessage messageFrom(const QSqlQuery& q) {
    return {.id = q.value(0).toString(),
            .parentId = q.value(1).toString(),
            .role = q.value(2).toString(),
            .content = q.value(3).toString(),
            .reasoning = q.value(4).toString(),
            .state = q.value(5).toString(),
            .error = q.value(6).toString(),
            .stats = statsFromJson(q.value(7).toString()),
            .thinkingMs = q.value(8).toLongLong(),
            .createdMs = q.value(9).toLongLong(),
            .model = q.value(10).toString()};
}

}  // namespace

StorageWorker::StorageWorker(QObject* parent)
    : StorageEvents(parent),
      m_connection(QStringLiteral("ember-storage-") + QUuid::createUuid().toString(QUuid::Id128)) {
    qRegisterMetaType<ember::desktop::ConversationInfo>();
    qRegisterMetaType<QList<ember::desktop::ConversationInfo>>();
    qRegisterMetaType<ember::desktop::LoadedConversation>();
}

StorageWorker::~StorageWorker() {
    close();
}

void StorageWorker::close() {
    if (!QSqlDatabase::contains(m_connection)) return;
    {
        QSqlDatabase db = QSqlDatabase::database(m_connection, false);
        db.close();
    }
    QSqlDatabase::removeDatabase(m_connection);
    m_open = false;
}

namespace {

// Why the history cannot be written, from the permission bits (so that a 0444 file is honoured even for root,
// whom the system lets write anyway): an empty string when it can.
QString readOnlyReason(const QString& path) {
    const QFileInfo file(path);
    const QFileInfo folder(file.absolutePath());
    if (file.exists() && !(file.permissions() & QFileDevice::WriteOwner))
        return QStringLiteral("%1 is read-only").arg(QDir::toNativeSeparators(path));
    if (!(folder.permissions() & QFileDevice::WriteOwner) || !folder.isWritable())
        return QStringLiteral("the folder %1 is read-only").arg(QDir::toNativeSeparators(folder.absoluteFilePath()));
    if (file.exists() && !file.isWritable())
        return QStringLiteral("%1 cannot be written").arg(QDir::toNativeSeparators(path));
    return {};
}

// SQLite's words for SQLITE_READONLY ("attempt to write a readonly database"), which the schema steps report.
bool isReadOnlyError(const QString& error) {
    return error.contains(QLatin1String("readonly database"));
}

}  // namespace

bool StorageWorker::openConnection(const QString& path, bool readOnly, QString* error) {
    close();
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connection);
    db.setDatabaseName(path);
    if (readOnly) db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY"));
    if (db.open()) return true;
    *error = path + QStringLiteral(": cannot open: ") + db.lastError().text();
    return false;
}

bool StorageWorker::openReadOnly(const QString& path, QString* error) {
    if (!QFileInfo::exists(path)) {
        *error = path + QStringLiteral(": there is no history yet and it cannot be created");
        return false;
    }
    if (!openConnection(path, true, error)) return false;
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    if (const QString damage = databaseDamage(db); !damage.isEmpty()) {
        *error =
            path + QStringLiteral(": the file is damaged (%1) and read-only, so it cannot be repaired").arg(damage);
        return false;
    }
    const int version = schema::version(db);
    if (version != schema::kSchemaVersion) {
        *error = QStringLiteral(
                     "%1: schema version %2 cannot be read without upgrading it (this Ember uses %3), "
                     "and the file is read-only")
                     .arg(path)
                     .arg(version)
                     .arg(schema::kSchemaVersion);
        return false;
    }
    return true;
}

bool StorageWorker::recover(const QString& path, const QString& damage, QString* error) {
    qCWarning(lcStorage).noquote() << path << "is damaged:" << damage
                                   << "- moving it aside and recovering what can be read";
    close();
    const QString movedTo = moveAside(path, error);
    if (movedTo.isEmpty()) {
        *error = path + QStringLiteral(": the file is damaged (%1) and ").arg(damage) + *error;
        return false;
    }
    if (!openConnection(path, false, error)) return false;
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    if (!schema::configure(db, error) || !schema::migrate(db, error)) return false;
    const SalvageResult r = salvageInto(db, movedTo);
    const auto counted = [](int n, const char* one, const char* many) {
        return QStringLiteral("%1 %2").arg(n).arg(QLatin1String(n == 1 ? one : many));
    };
    QString summary = counted(r.conversations, "conversation", "conversations") + QStringLiteral(" and ") +
                      counted(r.messages, "message", "messages") + QStringLiteral(" recovered");
    if (r.unreadable > 0) summary += QStringLiteral("; some of the damaged parts could not be read");
    qCWarning(lcStorage).noquote() << "moved the damaged history to" << movedTo << "-" << summary;
    Q_EMIT recovered(movedTo, summary);
    return true;
}

bool StorageWorker::openWritable(const QString& path, QString* error) {
    if (!openConnection(path, false, error)) return false;
    const QString damage = databaseDamage(QSqlDatabase::database(m_connection));
    if (!damage.isEmpty() && !recover(path, damage, error)) return false;
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    return schema::configure(db, error) && schema::migrate(db, error);
}

void StorageWorker::open(const QString& path) {
    close();
    m_readOnly = false;
    QDir().mkpath(QFileInfo(path).absolutePath());
    QString reason = readOnlyReason(path);
    QString error;
    if (reason.isEmpty()) {
        m_open = openWritable(path, &error);
        if (!m_open && isReadOnlyError(error))
            reason = error;  // a read-only file system, or a file the permission bits did not reveal
    }
    if (!reason.isEmpty()) {
        m_readOnly = true;
        m_open = openReadOnly(path, &error);
        qCWarning(lcStorage).noquote() << "history is read-only:" << reason;
        Q_EMIT readOnly(reason);
    }
    if (!m_open) {
        close();
        qCWarning(lcStorage).noquote() << error;
    }
    Q_EMIT opened(m_open, error);
}

bool StorageWorker::ready() {
    if (!m_open) Q_EMIT failed(QStringLiteral("the conversation database is not open"));
    return m_open;
}

bool StorageWorker::writable() {
    if (m_readOnly) return false;  // the read-only banner already says that nothing is saved
    return ready();
}

void StorageWorker::fail(const QString& what, const QString& why) {
    const QString message = what + QStringLiteral(": ") + why;
    qCWarning(lcStorage) << message;
    Q_EMIT failed(message);
}

void StorageWorker::saveConversation(const ConversationInfo& info) {
    if (!writable()) return;
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    QSqlQuery q(db);
    q.prepare(QStringLiteral(
        "INSERT INTO conversations (id, title, created_at, updated_at, thinking_enabled, active_leaf) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET title = excluded.title, "
        "updated_at = excluded.updated_at, thinking_enabled = excluded.thinking_enabled, "
        "active_leaf = excluded.active_leaf"));
    q.addBindValue(info.id);
    q.addBindValue(notNull(info.title));
    q.addBindValue(info.createdMs);
    q.addBindValue(info.updatedMs);
    q.addBindValue(info.thinkingEnabled ? 1 : 0);
    q.addBindValue(info.activeLeaf);
    if (!q.exec()) fail(QStringLiteral("saving conversation ") + info.id, q.lastError().text());
}

void StorageWorker::saveMessage(const QString& conversationId, const ChatMessage& m) {
    if (!writable()) return;
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    db.transaction();
    QSqlQuery q(db);
    q.prepare(QStringLiteral(
        "INSERT INTO messages (id, conversation_id, parent_id, role, content, reasoning, state, created_at, stats, "
        "thinking_ms, error, model) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
        "content = excluded.content, reasoning = excluded.reasoning, state = excluded.state, stats = excluded.stats, "
        "thinking_ms = excluded.thinking_ms, error = excluded.error"));
    q.addBindValue(m.id);
    q.addBindValue(conversationId);
    q.addBindValue(m.parentId.isEmpty() ? QVariant() : QVariant(m.parentId));
    q.addBindValue(notNull(m.role));
    q.addBindValue(notNull(m.content));
    q.addBindValue(notNull(m.reasoning));
    q.addBindValue(notNull(m.state));
    q.addBindValue(m.createdMs);
    q.addBindValue(statsJson(m.stats));
    q.addBindValue(m.thinkingMs);
    q.addBindValue(notNull(m.error));
    q.addBindValue(notNull(m.model));
    bool ok = q.exec();
    QString why = q.lastError().text();
    for (int i = 0; ok && i < m.attachments.size(); ++i) {
        const Attachment& a = m.attachments[i];
        QSqlQuery qa(db);
        qa.prepare(QStringLiteral("INSERT OR IGNORE INTO attachments (id, message_id, position, name, mime_type, data) "
                                  "VALUES (?, ?, ?, ?, ?, ?)"));
        qa.addBindValue(a.id);
        qa.addBindValue(m.id);
        qa.addBindValue(i);
        qa.addBindValue(notNull(a.name));
        qa.addBindValue(notNull(a.mimeType));
        qa.addBindValue(a.data);
        ok = qa.exec();
        if (!ok) why = qa.lastError().text();
    }
    if (ok) {
        QSqlQuery qc(db);
        qc.prepare(QStringLiteral("UPDATE conversations SET updated_at = MAX(updated_at, ?) WHERE id = ?"));
        qc.addBindValue(QDateTime::currentMSecsSinceEpoch());
        qc.addBindValue(conversationId);
        ok = qc.exec();
        if (!ok) why = qc.lastError().text();
    }
    if (ok) ok = db.commit();
    if (!ok) {
        db.rollback();
        fail(QStringLiteral("saving message ") + m.id, why);
        return;
    }
    Q_EMIT messageSaved(m.id, m.state, static_cast<int>(m.content.size()));
}

void StorageWorker::deleteConversation(const QString& id) {
    if (!writable()) return;
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("DELETE FROM conversations WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec()) fail(QStringLiteral("deleting conversation ") + id, q.lastError().text());
}

void StorageWorker::listConversations(quint64 request, const QString& filter) {
    QList<ConversationInfo> out;
    if (!ready()) {
        Q_EMIT listed(request, out);
        return;
    }
    QSqlQuery q(QSqlDatabase::database(m_connection));
    const QString trimmed = filter.trimmed();
    if (trimmed.isEmpty()) {
        q.prepare(QStringLiteral("SELECT ") + kConversationColumns +
                  QStringLiteral(" FROM conversations c ORDER BY c.updated_at DESC"));
    } else {
        // Title or any message's text (answer or reasoning), case-insensitively for ASCII as SQLite's LIKE is.
        q.prepare(QStringLiteral("SELECT ") + kConversationColumns +
                  QStringLiteral(" FROM conversations c WHERE c.title LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM "
                                 "messages m WHERE m.conversation_id = c.id AND (m.content LIKE ? ESCAPE '\\' OR "
                                 "m.reasoning LIKE ? ESCAPE '\\')) ORDER BY c.updated_at DESC"));
        for (int i = 0; i < 3; ++i) q.addBindValue(likePattern(trimmed));
    }
    if (!q.exec()) {
        fail(QStringLiteral("listing conversations"), q.lastError().text());
    } else {
        while (q.next()) out.append(conversationFrom(q));
    }
    Q_EMIT listed(request, out);
}

void StorageWorker::loadConversation(quint64 request, const QString& id) {
    LoadedConversation out;
    if (!ready()) {
        Q_EMIT loaded(request, out);
        return;
    }
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    QSqlQuery q(db);
    q.prepare(QStringLiteral("SELECT ") + kConversationColumns + QStringLiteral(" FROM conversations c WHERE c.id = ?"));
    q.addBindValue(id);
    if (!q.exec() || !q.next()) {
        Q_EMIT loaded(request, out);
        return;
    }
    out.found = true;
    out.info = conversationFrom(q);

    QSqlQuery qm(db);
    qm.prepare(QStringLiteral("SELECT ") + kMessageColumns +
               QStringLiteral(" FROM messages WHERE conversation_id = ? ORDER BY created_at, rowid"));
    qm.addBindValue(id);
    if (!qm.exec()) fail(QStringLiteral("loading conversation ") + id, qm.lastError().text());
    QHash<QString, qsizetype> index;
    while (qm.next()) {
        const ChatMessage m = messageFrom(qm);
        index.insert(m.id, out.messages.size());
        out.messages.append(m);
    }

    QSqlQuery qa(db);
    qa.prepare(QStringLiteral("SELECT a.id, a.message_id, a.name, a.mime_type, a.data FROM attachments a JOIN messages m "
                              "ON m.id = a.message_id WHERE m.conversation_id = ? ORDER BY a.message_id, a.position"));
    qa.addBindValue(id);
    if (!qa.exec()) fail(QStringLiteral("loading images of ") + id, qa.lastError().text());
    while (qa.next()) {
        Attachment a;
        a.id = qa.value(0).toString();
        a.name = qa.value(2).toString();
        a.mimeType = qa.value(3).toString();
        a.data = qa.value(4).toByteArray();
        const QImage image = QImage::fromData(a.data);
        if (!image.isNull())
            out.thumbnails.insert(a.id, image.width() > kThumbnailSize || image.height() > kThumbnailSize
                                            ? image.scaled(kThumbnailSize, kThumbnailSize, Qt::KeepAspectRatio,
                                                           Qt::SmoothTransformation)
                                            : image);
        const auto it = index.constFind(qa.value(1).toString());
        if (it != index.constEnd()) out.messages[*it].attachments.append(a);
    }
    Q_EMIT loaded(request, out);
}

}  // namespace ember::desktop
