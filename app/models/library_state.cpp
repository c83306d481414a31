// SPDX-License-Identifier: MIT
// library.json to and from LibraryEntry lists, checking every field's type on the way in.
#include "library_state.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "catalog.h"

namespace ember::models {

namespace {

constexpr int kStateVersion = 1;

QString relativeOrAbsolute(const QString& folder, const QString& path) {
    const QString rel = QDir(folder).relativeFilePath(path);
    return rel.startsWith(QStringLiteral("..")) ? QFileInfo(path).absoluteFilePath() : rel;
}

QJsonObject fileJson(const LibraryFile& f, const QString& folder) {
    QJsonObject o;
    o.insert(QStringLiteral("path"), relativeOrAbsolute(folder, f.path));
    o.insert(QStringLiteral("role"), f.role);
    o.insert(QStringLiteral("size"), f.size);
    if (!f.sha256.isEmpty()) o.insert(QStringLiteral("sha256"), f.sha256);
    if (!f.gitOid.isEmpty()) o.insert(QStringLiteral("git_oid"), f.gitOid);
    o.insert(QStringLiteral("status"), f.status);
    if (!f.error.isEmpty()) o.insert(QStringLiteral("error"), f.error);
    return o;
}

// An optional string member; false when it is present with another type.
bool readString(const QJsonObject& o, const char* key, QString& out, QString& error, const QString& where) {
    const QJsonValue v = o.value(QLatin1String(key));
    if (v.isUndefined()) return true;
    if (!v.isString()) {
        error = QStringLiteral("%1: '%2' is not a string").arg(where, QLatin1String(key));
        return false;
    }
    out = v.toString();
    return true;
}

bool readObject(const QJsonValue& v, QJsonObject& o, QString& error, const QString& where) {
    if (!v.isObject()) {
        error = where + QStringLiteral(": not an object");
        return false;
    }
    o = v.toObject();
    return true;
}

bool parseFile(const QJsonValue& v, const QString& folder, LibraryFile& f, QString& error, const QString& where) {
    QJsonObject o;
    QString path;
    if (!readObject(v, o, error, where)) return false;
    if (!readString(o, "path", path, error, where) || !readString(o, "role", f.role, error, where) ||
        !readString(o, "sha256", f.sha256, error, where) || !readString(o, "git_oid", f.gitOid, error, where) ||
        !readString(o, "status", f.status, error, where) || !readString(o, "error", f.error, error, where))
        return false;
    if (path.isEmpty()) {
        error = where + QStringLiteral(": no 'path'");
        return false;
    }
    f.path = QDir(folder).absoluteFilePath(path);
    const QJsonValue size = o.value(QStringLiteral("size"));
    if (!size.isUndefined()) {
        const qint64 n = size.toInteger(-2);
        if (n < -1) {
            error = where + QStringLiteral(": 'size' is not a byte count");
            return false;
        }
        f.size = n;
    }
    return true;
}

bool parseEntry(const QJsonValue& v, const QString& folder, LibraryEntry& e, QString& error, const QString& where) {
    QJsonObject o;
    QString added;
    if (!readObject(v, o, error, where)) return false;
    if (!readString(o, "id", e.id, error, where) || !readString(o, "source", e.source, error, where) ||
        !readString(o, "repo", e.repo, error, where) || !readString(o, "catalog_id", e.catalogId, error, where) ||
        !readString(o, "added", added, error, where))
        return false;
    if (e.id.isEmpty()) {
        error = where + QStringLiteral(": no 'id'");
        return false;
    }
    e.added = QDateTime::fromString(added, Qt::ISODate);
    const QJsonValue files = o.value(QStringLiteral("files"));
    if (!files.isUndefined() && !files.isArray()) {
        error = where + QStringLiteral(": 'files' is not an array");
        return false;
    }
    const QJsonArray list = files.toArray();
    for (qsizetype i = 0; i < list.size(); ++i) {
        LibraryFile f;
        if (!parseFile(list[i], folder, f, error, QStringLiteral("%1, file %2").arg(where).arg(i))) return false;
        e.files.append(f);
    }
    return true;
}

}  // namespace

const LibraryFile* LibraryEntry::fileWithRole(const QString& role) const {
    for (const LibraryFile& f : files)
        if (f.role == role) return &f;
    return nullptr;
}

LibraryEntry LibraryEntry::withProjector(const QString& path) const {
    LibraryEntry e = *this;
    const QString role = QString::fromLatin1(kRoleProjector);
    e.files.removeIf([&](const LibraryFile& f) { return f.role == role; });
    if (path.isEmpty()) return e;
    LibraryFile p;
    p.path = QFileInfo(path).absoluteFilePath();
    p.role = role;
    p.size = QFileInfo(path).size();
    e.files.append(p);
    return e;
}

bool LibraryEntry::ready() const {
    if (files.isEmpty()) return false;
    for (const LibraryFile& f : files)
        if (f.status != QLatin1String(kStatusReady)) return false;
    return true;
}

QByteArray libraryStateJson(const QList<LibraryEntry>& entries, const QString& folder) {
    QJsonArray models;
    for (const LibraryEntry& e : entries) {
        QJsonObject o;
        o.insert(QStringLiteral("id"), e.id);
        o.insert(QStringLiteral("source"), e.source);
        if (!e.repo.isEmpty()) o.insert(QStringLiteral("repo"), e.repo);
        if (!e.catalogId.isEmpty()) o.insert(QStringLiteral("catalog_id"), e.catalogId);
        o.insert(QStringLiteral("added"), e.added.toString(Qt::ISODate));
        QJsonArray files;
        for (const LibraryFile& f : e.files) files.append(fileJson(f, folder));
        o.insert(QStringLiteral("files"), files);
        models.append(o);
    }
    QJsonObject root;
    root.insert(QStringLiteral("version"), kStateVersion);
    root.insert(QStringLiteral("models"), models);
    return QJsonDocument(root).toJson();
}

bool parseLibraryState(const QByteArray& json, const QString& folder, QList<LibraryEntry>& entries, QString& error) {
    entries.clear();
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        error = json.isEmpty() ? QStringLiteral("the file is empty")
                               : QStringLiteral("%1 at byte %2").arg(parseError.errorString()).arg(parseError.offset);
        return false;
    }
    if (!doc.isObject()) {
        error = QStringLiteral("not a JSON object");
        return false;
    }
    const QJsonObject root = doc.object();
    if (root.value(QStringLiteral("version")).toInteger(-1) != kStateVersion) {
        error = QStringLiteral("'version' is not %1").arg(kStateVersion);
        return false;
    }
    const QJsonValue models = root.value(QStringLiteral("models"));
    if (!models.isArray()) {
        error = QStringLiteral("'models' is not an array");
        return false;
    }
    const QJsonArray list = models.toArray();
    for (qsizetype i = 0; i < list.size(); ++i) {
        LibraryEntry e;
        if (!parseEntry(list[i], folder, e, error, QStringLiteral("model %1").arg(i))) {
            entries.clear();
            return false;
        }
        entries.append(e);
    }
    return true;
}

}  // namespace ember::models
