// SPDX-License-Identifier: MIT
// The model catalog: data in resources/catalog.json (built into the program, overridable with a file), listing
// the models Ember suggests. Each entry names a Hugging Face repository, the files of one unit with the role of
// each file, its capabilities and a license note. Sizes and hashes are not in the catalog: they come from the
// hub's listing when a unit is pulled, and are recorded in the library.
//
// The catalog never touches the network or the disk beyond reading its own JSON.
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

namespace ember::models {

// File roles in a unit.
inline constexpr auto kRoleModel = "model";
inline constexpr auto kRoleProjector = "vision_projector";
inline constexpr auto kRoleTemplate = "template";
inline constexpr auto kRoleDraft = "draft";

struct CatalogFile {
    QString path;
    QString role;
    bool verified = false;  // the name was checked against a public reference
};

// Memory shape of a unit's model, for the fit estimate before the file is on disk (after the download, the file's
// own header is read instead). Zero means unknown.
struct CatalogMemory {
    quint64 kvBytesPerPosition = 0;
    quint64 recurrentStateBytes = 0;
    quint64 draftKvBytesPerPosition = 0;
    quint32 speculativeTokens = 0;  // tokens a draft may propose: recurrent-state snapshots kept for rollback
    bool known() const { return kvBytesPerPosition > 0; }
};

struct CatalogEntry {
    QString id;
    QString name;
    QString repo;
    QList<CatalogFile> files;
    QStringList capabilities;  // "thinking", "vision", "drafted", "mtp"
    QString license;
    QString note;
    bool verified = false;  // the repository and file names were checked against a public source
    double approxGiB = 0;   // for display before the listing is read; the listing's sizes win
    bool starter = false;   // a small model to try Ember with
    CatalogMemory memory;

    QStringList filePaths() const;
};

class Catalog {
public:
    // The catalog built into the program (resources/catalog.json).
    static Catalog builtIn();
    // A catalog file; on a problem, returns an empty catalog and sets `error` to one line naming the file.
    static Catalog fromFile(const QString& path, QString* error);
    static Catalog fromJson(const QByteArray& json, const QString& sourceName, QString* error);

    const QList<CatalogEntry>& entries() const { return m_entries; }
    const CatalogEntry* find(const QString& id) const;
    QList<CatalogEntry> forRepo(const QString& repo) const;
    // Case-insensitive match on id, name, repo, file names and capabilities; every word must match.
    QList<CatalogEntry> search(const QString& query) const;

private:
    QList<CatalogEntry> m_entries;
};

// The role of a file by its name: mmproj*.gguf -> vision projector, *.jinja -> template, a name with "dflash" or
// "draft" -> draft, other .gguf -> model; "" for anything else.
QString roleForFileName(const QString& fileName);

}  // namespace ember::models
