// SPDX-License-Identifier: MIT
#include "schema.h"

#include <QSqlError>
#include <QSqlQuery>
#include <QStringList>

namespace ember::desktop::schema {

namespace {

// migrations[i] takes the schema from version i to i + 1. Never edit a released step; add a new one.
const QList<QStringList>& migrations() {
    static const QList<QStringList> steps = {
        // 1: conversations and their messages; a message's parent makes the branches (regenerate, edit).
        {
            QStringLiteral("CREATE TABLE conversations ("
                           " id TEXT PRIMARY KEY,"
                           " title TEXT NOT NULL,"
                           " created_at INTEGER NOT NULL,"
                           " updated_at INTEGER NOT NULL)"),
            QStringLiteral("CREATE TABLE messages ("
                           " id TEXT PRIMARY KEY,"
                           " conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
                           " parent_id TEXT,"
                           " role TEXT NOT NULL,"
                           " content TEXT NOT NULL DEFAULT '',"
                           " reasoning TEXT NOT NULL DEFAULT '',"
                           " state TEXT NOT NULL DEFAULT 'complete',"
                           " created_at INTEGER NOT NULL)"),
        },
        // 2: the thinking switch and the selected branch per conversation; images; statistics and thinking time.
        {
            QStringLiteral("ALTER TABLE conversations ADD COLUMN thinking_enabled INTEGER NOT NULL DEFAULT 1"),
            QStringLiteral("ALTER TABLE conversations ADD COLUMN active_leaf TEXT"),
            QStringLiteral("ALTER TABLE messages ADD COLUMN stats TEXT NOT NULL DEFAULT '{}'"),
            QStringLiteral("ALTER TABLE messages ADD COLUMN thinking_ms INTEGER NOT NULL DEFAULT 0"),
            QStringLiteral("CREATE TABLE attachments ("
                           " id TEXT PRIMARY KEY,"
                           " message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,"
                           " position INTEGER NOT NULL,"
                           " name TEXT NOT NULL,"
                           " mime_type TEXT NOT NULL,"
                           " data BLOB NOT NULL)"),
        },
        // 3: lookups by conversation, and the error text of a failed reply, and which model answered.
        {
            QStringLiteral("CREATE INDEX messages_by_conversation ON messages(conversation_id, created_at)"),
            QStringLiteral("CREATE INDEX attachments_by_message ON attachments(message_id, position)"),
            QStringLiteral("CREATE INDEX conversations_by_update ON conversations(updated_at DESC)"),
            QStringLiteral("ALTER TABLE messages ADD COLUMN error TEXT NOT NULL DEFAULT ''"),
            QStringLiteral("ALTER TABLE messages ADD COLUMN model TEXT NOT NULL DEFAULT ''"),
        },
    };
    return steps;
}

bool exec(QSqlDatabase& db, const QString& sql, QString* error) {
    QSqlQuery q(db);
    if (q.exec(sql)) return true;
    if (error) *error = q.lastError().text();
    return false;
}

}  // namespace

int version(const QSqlDatabase& db) {
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("PRAGMA user_version")) || !q.next()) return -1;
    return q.value(0).toInt();
}

bool configure(QSqlDatabase& db, QString* error) {
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("PRAGMA journal_mode=WAL")) || !q.next()) {
        // The real cause (not a database, read-only, locked...), not just the step that met it.
        if (error) *error = db.databaseName() + QStringLiteral(": ") + q.lastError().text();
        return false;
    }
    if (q.value(0).toString().compare(QStringLiteral("wal"), Qt::CaseInsensitive) != 0) {
        if (error)
            *error =
                db.databaseName() +
                QStringLiteral(": cannot switch to WAL journaling (the journal stays '%1')").arg(q.value(0).toString());
        return false;
    }
    return exec(db, QStringLiteral("PRAGMA synchronous=NORMAL"), error) &&
           exec(db, QStringLiteral("PRAGMA foreign_keys=ON"), error) &&
           exec(db, QStringLiteral("PRAGMA busy_timeout=5000"), error);
}

bool migrate(QSqlDatabase& db, QString* error, int target) {
    const int from = version(db);
    if (from < 0) {
        if (error) *error = db.databaseName() + QStringLiteral(": not a readable SQLite database");
        return false;
    }
    if (from > kSchemaVersion) {
        if (error)
            *error = QStringLiteral("%1: schema version %2 is newer than this Ember understands (%3); "
                                    "use a newer Ember or another data folder")
                         .arg(db.databaseName())
                         .arg(from)
                         .arg(kSchemaVersion);
        return false;
    }
    for (int v = from; v < target && v < migrations().size(); ++v) {
        QString why;
        bool ok = db.transaction();
        for (const QString& sql : migrations()[v])
            if (ok) ok = exec(db, sql, &why);
        if (ok) ok = exec(db, QStringLiteral("PRAGMA user_version=%1").arg(v + 1), &why);
        if (ok) ok = db.commit();
        if (!ok) {
            db.rollback();
            if (error)
                *error = QStringLiteral("%1: migration to schema version %2 failed: %3")
                             .arg(db.databaseName())
                             .arg(v + 1)
                             .arg(why.isEmpty() ? db.lastError().text() : why);
            return false;
        }
    }
    return true;
}

}  // namespace ember::desktop::schema
