// SPDX-License-Identifier: MIT
// The conversation database's schema and its versioned migrations. The version lives in SQLite's user_version;
// each migration moves the schema one version up inside a transaction, so a failure leaves the file at the last
// complete version. A file written by a newer Ember (a version above kSchemaVersion) is refused, never altered.
#pragma once

#include <QSqlDatabase>
#include <QString>

namespace ember::desktop::schema {

inline constexpr int kSchemaVersion = 3;

int version(const QSqlDatabase& db);
// Migrates up to `target` (kSchemaVersion by default). Returns false with a one-line `error` naming the step.
bool migrate(QSqlDatabase& db, QString* error, int target = kSchemaVersion);
// WAL journal, NORMAL sync (a committed transaction survives a killed process), foreign keys on.
bool configure(QSqlDatabase& db, QString* error);

}  // namespace ember::desktop::schema
