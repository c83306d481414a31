// SPDX-License-Identifier: MIT
// The model manager's small state files (library.json, the .part.json beside a download): replaced atomically, so
// that a full disk, a kill or a crash mid-write leaves the previous version and the failure is reported.
#pragma once

#include <QByteArray>
#include <QString>

namespace ember::models {

// Writes `data` to a temporary file beside `path`, syncs it to disk and renames it over `path`. On any failure
// `path` keeps its previous content, the temporary file is removed and `error` says what failed
// ("<path>: cannot write: No space left on device").
bool writeStateFile(const QString& path, const QByteArray& data, QString* error);

}  // namespace ember::models
