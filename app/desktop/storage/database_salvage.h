// SPDX-License-Identifier: MIT
// A conversation database that SQLite reports damaged is moved aside (conversations.sqlite.corrupt-<DATE>, with
// its -wal and -shm) and what can still be read of it is copied, table by table and row by row, into a fresh
// database at the original path. A file whose 100-byte header was wiped is read through a copy with a rebuilt
// header. Nothing here ever writes to the damaged file.
#pragma once

#include <QSqlDatabase>
#include <QString>

namespace ember::desktop {

// Whether an open connection's file is damaged: the reason (SQLite's words), or an empty string when it is sound.
QString databaseDamage(const QSqlDatabase& db);

struct SalvageResult {
    QString movedTo;  // where the damaged file now is
    int conversations = 0;
    int messages = 0;
    int attachments = 0;
    int unreadable = 0;  // runs of rows that could not be read
};

// Renames the damaged file (and its -wal and -shm) to <path>.corrupt-<DATE>; returns the new path, or an empty
// string with `error` set when the file cannot be moved.
QString moveAside(const QString& path, QString* error);
// Copies what can be read of the moved file into `fresh`, an open, migrated database; never fails as a whole.
SalvageResult salvageInto(QSqlDatabase& fresh, const QString& damagedPath);

}  // namespace ember::desktop
