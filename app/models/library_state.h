// SPDX-License-Identifier: MIT
// What library.json records: the entries with their files, roles, sizes, hashes and statuses, and their JSON form.
// Qt Core only, so that the parser can be fuzzed on its own (tests/fuzz/model_state_fuzzer.cpp).
#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QString>

namespace ember::models {

inline constexpr auto kStatusReady = "ready";
inline constexpr auto kStatusFailed = "failed";
inline constexpr auto kStatusUnverified = "unverified";

struct LibraryFile {
    QString path;  // absolute
    QString role;  // catalog.h roles
    qint64 size = -1;
    QString sha256;
    QString gitOid;  // the hub's git blob id, for small files without an LFS hash
    QString status = QString::fromLatin1(kStatusUnverified);
    QString error;  // why it is not ready

    bool operator==(const LibraryFile&) const = default;
};

struct LibraryEntry {
    QString id;      // hub: "owner/name/file.gguf"; local files: the model file's absolute path
    QString source;  // "hub", "import", "folder", "hf-cache"
    QString repo;
    QString catalogId;
    QDateTime added;
    QList<LibraryFile> files;

    const LibraryFile* fileWithRole(const QString& role) const;
    // The entry with `path` as its vision projector instead of the paired one (empty: no projector).
    LibraryEntry withProjector(const QString& path) const;
    bool ready() const;  // every file ready
    bool operator==(const LibraryEntry&) const = default;
};

// {"version": 1, "models": [{id, source, repo?, catalog_id?, added, files: [{path, role, size, sha256?, git_oid?,
// status, error?}]}]}; paths inside `folder` are stored relative to it, so that the folder can move.
QByteArray libraryStateJson(const QList<LibraryEntry>& entries, const QString& folder);
// The reverse; false with `error` naming the problem ("model 3: 'files' is not an array") when `json` is not a
// library state. Relative paths are resolved against `folder`.
bool parseLibraryState(const QByteArray& json, const QString& folder, QList<LibraryEntry>& entries, QString& error);

}  // namespace ember::models
