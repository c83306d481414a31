// SPDX-License-Identifier: MIT
#include "database_salvage.h"

#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QStringList>
#include <QUuid>
#include <QtEndian>

#include <limits>

namespace ember::desktop {

namespace {

// SQLite's primary result codes for a damaged file (Qt reports them as nativeErrorCode()).
bool isDamageCode(const QSqlError& error) {
    const QString code = error.nativeErrorCode();
    return code == QLatin1String("11") || code == QLatin1String("26");  // SQLITE_CORRUPT, SQLITE_NOTADB
}

// A read-only connection on `path`, removed with the object.
class ReadConnection {
public:
    explicit ReadConnection(const QString& path)
        : m_name(QStringLiteral("ember-salvage-") + QUuid::createUuid().toString(QUuid::Id128)) {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_name);
        db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY"));
        db.setDatabaseName(path);
        db.open();
    }
    ~ReadConnection() {
        { QSqlDatabase::database(m_name, false).close(); }
        QSqlDatabase::removeDatabase(m_name);
    }
    QSqlDatabase db() const { return QSqlDatabase::database(m_name, false); }
    bool readable() const {
        QSqlQuery q(db());
        return q.exec(QStringLiteral("SELECT count(*) FROM sqlite_master")) && q.next();
    }

private:
    QString m_name;
};

// A copy of a file whose 100-byte header was wiped, with a header rebuilt for `pageSize`. SQLite keeps the rest
// of page 1 (the schema table) after the header, so the tables are readable again when the page size is right.
QString withRebuiltHeader(const QString& damagedPath, quint32 pageSize) {
    QFile in(damagedPath);
    if (!in.open(QIODevice::ReadOnly)) return {};
    QByteArray data = in.readAll();
    if (data.size() < 100 || data.size() % pageSize != 0) return {};
    QByteArray header(100, '\0');
    header.replace(0, 16, QByteArray("SQLite format 3\0", 16));
    qToBigEndian<quint16>(pageSize == 65536 ? 1 : static_cast<quint16>(pageSize), header.data() + 16);
    header[18] = 1;  // legacy (rollback) journal, so no -wal is needed to read it
    header[19] = 1;
    header[21] = 64;
    header[22] = 32;
    header[23] = 32;
    qToBigEndian<quint32>(1, header.data() + 24);                                             // change counter
    qToBigEndian<quint32>(static_cast<quint32>(data.size() / pageSize), header.data() + 28);  // pages
    qToBigEndian<quint32>(1, header.data() + 40);                                             // schema cookie
    qToBigEndian<quint32>(4, header.data() + 44);                                             // schema format
    qToBigEndian<quint32>(1, header.data() + 56);                                             // UTF-8
    qToBigEndian<quint32>(1, header.data() + 92);                                             // valid for counter 1
    qToBigEndian<quint32>(3040000, header.data() + 96);
    data.replace(0, 100, header);
    const QString copy = damagedPath + QStringLiteral(".header-%1").arg(pageSize);
    QFile out(copy);
    if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate) || out.write(data) != data.size()) return {};
    return copy;
}

QStringList columnsOf(const QSqlDatabase& db, const QString& table) {
    QStringList columns;
    const QSqlRecord record = db.record(table);
    for (int i = 0; i < record.count(); ++i) columns.append(record.fieldName(i));
    return columns;
}

struct TableCopy {
    int rows = 0;
    int unreadable = 0;
};

// Copies the rows of `table` in rowid order. A damaged page ends a scan; the copy then restarts past the
// failing rowid, further each time, so the rows after the damage are still found.
TableCopy copyTable(const QSqlDatabase& from, QSqlDatabase& to, const QString& table) {
    TableCopy result;
    QStringList columns;
    const QStringList present = columnsOf(from, table);
    for (const QString& c : columnsOf(to, table))
        if (present.contains(c)) columns.append(c);
    if (columns.isEmpty()) return result;
    QSqlQuery insert(to);
    insert.prepare(QStringLiteral("INSERT OR IGNORE INTO %1 (%2) VALUES (%3)")
                       .arg(table, columns.join(QLatin1Char(',')),
                            QStringList(columns.size(), QStringLiteral("?")).join(QLatin1Char(','))));
    qint64 after = std::numeric_limits<qint64>::min();
    qint64 skip = 1;
    for (int failures = 0; failures < 64;) {
        QSqlQuery q(from);
        q.setForwardOnly(true);
        q.prepare(QStringLiteral("SELECT rowid, %1 FROM %2 WHERE rowid > ? ORDER BY rowid")
                      .arg(columns.join(QLatin1Char(',')), table));
        q.addBindValue(after);
        bool failed = !q.exec();
        while (!failed && q.next()) {
            after = q.value(0).toLongLong();
            for (int i = 0; i < columns.size(); ++i) insert.addBindValue(q.value(i + 1));
            if (insert.exec() && insert.numRowsAffected() > 0) ++result.rows;
            skip = 1;
        }
        if (!failed) failed = q.lastError().isValid();
        if (!failed) break;  // the end of the table
        ++result.unreadable;
        ++failures;
        if (after > std::numeric_limits<qint64>::max() - skip) break;
        after += skip;
        skip *= 2;
    }
    return result;
}

}  // namespace

QString databaseDamage(const QSqlDatabase& db) {
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("PRAGMA quick_check")))
        return isDamageCode(q.lastError()) ? q.lastError().databaseText() : QString();
    QStringList problems;
    while (q.next() && problems.size() < 3) problems.append(q.value(0).toString());
    if (q.lastError().isValid() && isDamageCode(q.lastError())) return q.lastError().databaseText();
    if (problems.isEmpty() || (problems.size() == 1 && problems[0] == QLatin1String("ok"))) return {};
    return problems.join(QStringLiteral("; "));
}

QString moveAside(const QString& path, QString* error) {
    const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    QString target = path + QStringLiteral(".corrupt-") + stamp;
    for (int n = 2; QFileInfo::exists(target); ++n)
        target = path + QStringLiteral(".corrupt-") + stamp + QStringLiteral("-%1").arg(n);
    if (!QFile::rename(path, target)) {
        if (error) *error = QStringLiteral("cannot move %1 aside to %2").arg(path, target);
        return {};
    }
    for (const char* suffix : {"-wal", "-shm"})
        if (QFileInfo::exists(path + QLatin1String(suffix)))
            QFile::rename(path + QLatin1String(suffix), target + QLatin1String(suffix));
    return target;
}

SalvageResult salvageInto(QSqlDatabase& fresh, const QString& damagedPath) {
    SalvageResult result;
    result.movedTo = damagedPath;
    QString source = damagedPath;
    QString rebuilt;
    {
        ReadConnection probe(damagedPath);
        if (!probe.readable()) {
            for (quint32 size : {4096u, 1024u, 8192u, 16384u, 32768u, 65536u, 512u, 2048u}) {
                const QString copy = withRebuiltHeader(damagedPath, size);
                if (copy.isEmpty()) continue;
                if (ReadConnection(copy).readable()) {
                    rebuilt = source = copy;
                    break;
                }
                QFile::remove(copy);
            }
        }
    }
    {
        ReadConnection damaged(source);
        QSqlQuery(fresh).exec(QStringLiteral("PRAGMA foreign_keys=OFF"));  // parents may be among the lost rows
        fresh.transaction();
        const TableCopy conversations = copyTable(damaged.db(), fresh, QStringLiteral("conversations"));
        const TableCopy messages = copyTable(damaged.db(), fresh, QStringLiteral("messages"));
        const TableCopy attachments = copyTable(damaged.db(), fresh, QStringLiteral("attachments"));
        QSqlQuery repair(fresh);
        // Messages whose conversation was lost get one; images whose message was lost are dropped.
        repair.exec(QStringLiteral(
            "INSERT INTO conversations (id, title, created_at, updated_at) SELECT conversation_id, "
            "'Recovered conversation', MIN(created_at), MAX(created_at) FROM messages WHERE conversation_id NOT IN "
            "(SELECT id FROM conversations) GROUP BY conversation_id"));
        result.conversations = conversations.rows + static_cast<int>(repair.numRowsAffected());
        repair.exec(QStringLiteral("DELETE FROM attachments WHERE message_id NOT IN (SELECT id FROM messages)"));
        result.messages = messages.rows;
        result.attachments = attachments.rows - static_cast<int>(repair.numRowsAffected());
        result.unreadable = conversations.unreadable + messages.unreadable + attachments.unreadable;
        fresh.commit();
        QSqlQuery(fresh).exec(QStringLiteral("PRAGMA foreign_keys=ON"));
    }
    if (!rebuilt.isEmpty()) QFile::remove(rebuilt);
    return result;
}

}  // namespace ember::desktop
