// SPDX-License-Identifier: MIT
#include "catalog.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "hub_client.h"

namespace ember::models {

namespace {

const QStringList kRoles = {QString::fromLatin1(kRoleModel), QString::fromLatin1(kRoleProjector),
                            QString::fromLatin1(kRoleTemplate), QString::fromLatin1(kRoleDraft)};
const QStringList kCapabilities = {QStringLiteral("thinking"), QStringLiteral("vision"), QStringLiteral("drafted"),
                                   QStringLiteral("mtp")};

}  // namespace

QStringList CatalogEntry::filePaths() const {
    QStringList out;
    for (const CatalogFile& f : files) out.append(f.path);
    return out;
}

Catalog Catalog::builtIn() {
    QString error;
    Catalog c = fromFile(QStringLiteral(":/ember/catalog.json"), &error);
    return c;
}

Catalog Catalog::fromFile(const QString& path, QString* error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error) *error = QStringLiteral("%1: cannot read the catalog: %2").arg(path, file.errorString());
        return {};
    }
    return fromJson(file.readAll(), path, error);
}

Catalog Catalog::fromJson(const QByteArray& json, const QString& sourceName, QString* error) {
    auto fail = [&](const QString& why) {
        if (error) *error = sourceName + QStringLiteral(": ") + why;
        return Catalog{};
    };
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return fail(QStringLiteral("not JSON (%1 at byte %2)").arg(parseError.errorString()).arg(parseError.offset));
    const QJsonObject root = doc.object();
    if (root.value(QStringLiteral("version")).toInt() != 1) return fail(QStringLiteral("expected \"version\": 1"));
    Catalog catalog;
    const QJsonArray entries = root.value(QStringLiteral("entries")).toArray();
    for (int i = 0; i < entries.size(); ++i) {
        const QJsonObject o = entries[i].toObject();
        CatalogEntry e;
        e.id = o.value(QStringLiteral("id")).toString();
        e.name = o.value(QStringLiteral("name")).toString();
        e.repo = o.value(QStringLiteral("repo")).toString();
        e.license = o.value(QStringLiteral("license")).toString();
        e.note = o.value(QStringLiteral("note")).toString();
        e.verified = o.value(QStringLiteral("verified")).toBool(false);
        e.approxGiB = o.value(QStringLiteral("approx_gib")).toDouble(0);
        e.starter = o.value(QStringLiteral("starter")).toBool(false);
        const QJsonObject memory = o.value(QStringLiteral("memory")).toObject();
        e.memory.kvBytesPerPosition =
            static_cast<quint64>(memory.value(QStringLiteral("kv_bytes_per_position")).toInteger(0));
        e.memory.recurrentStateBytes =
            static_cast<quint64>(memory.value(QStringLiteral("recurrent_state_bytes")).toInteger(0));
        e.memory.draftKvBytesPerPosition =
            static_cast<quint64>(memory.value(QStringLiteral("draft_kv_bytes_per_position")).toInteger(0));
        e.memory.speculativeTokens =
            static_cast<quint32>(memory.value(QStringLiteral("speculative_tokens")).toInteger(0));
        const QString where = QStringLiteral("entry %1 ('%2')").arg(i).arg(e.id);
        for (const char* key :
             {"kv_bytes_per_position", "recurrent_state_bytes", "draft_kv_bytes_per_position", "speculative_tokens"})
            if (memory.value(QLatin1String(key)).toInteger(0) < 0 ||
                memory.value(QLatin1String(key)).toInteger(0) > (1ll << 40))
                return fail(where + QStringLiteral(": memory.%1 is out of range").arg(QLatin1String(key)));
        if (e.id.isEmpty() || e.name.isEmpty()) return fail(where + QStringLiteral(": needs an id and a name"));
        if (catalog.find(e.id)) return fail(where + QStringLiteral(": duplicate id"));
        if (!isValidRepoId(e.repo)) return fail(where + QStringLiteral(": repo '%1' is not owner/name").arg(e.repo));
        if (e.license.isEmpty()) return fail(where + QStringLiteral(": needs a license note"));
        for (const QJsonValue& c : o.value(QStringLiteral("capabilities")).toArray()) {
            if (!kCapabilities.contains(c.toString()))
                return fail(where + QStringLiteral(": unknown capability '%1' (known: %2)")
                                        .arg(c.toString(), kCapabilities.join(QStringLiteral(", "))));
            e.capabilities.append(c.toString());
        }
        int models = 0;
        for (const QJsonValue& fv : o.value(QStringLiteral("files")).toArray()) {
            const QJsonObject f = fv.toObject();
            CatalogFile file{f.value(QStringLiteral("path")).toString(), f.value(QStringLiteral("role")).toString(),
                             f.value(QStringLiteral("verified")).toBool(false)};
            if (!isSafeRepoPath(file.path)) return fail(where + QStringLiteral(": bad file path '%1'").arg(file.path));
            if (!kRoles.contains(file.role))
                return fail(where + QStringLiteral(": file '%1' has unknown role '%2' (known: %3)")
                                        .arg(file.path, file.role, kRoles.join(QStringLiteral(", "))));
            if (file.role == QString::fromLatin1(kRoleModel)) ++models;
            e.files.append(file);
        }
        if (models != 1)
            return fail(where + QStringLiteral(": needs exactly one file with role 'model', has %1").arg(models));
        catalog.m_entries.append(e);
    }
    return catalog;
}

const CatalogEntry* Catalog::find(const QString& id) const {
    for (const CatalogEntry& e : m_entries)
        if (e.id == id) return &e;
    return nullptr;
}

QList<CatalogEntry> Catalog::forRepo(const QString& repo) const {
    QList<CatalogEntry> out;
    for (const CatalogEntry& e : m_entries)
        if (e.repo.compare(repo, Qt::CaseInsensitive) == 0) out.append(e);
    return out;
}

QList<CatalogEntry> Catalog::search(const QString& query) const {
    const QStringList words = query.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    QList<CatalogEntry> out;
    for (const CatalogEntry& e : m_entries) {
        const QString haystack =
            QStringList{
                e.id,  e.name, e.repo, e.filePaths().join(QLatin1Char(' ')), e.capabilities.join(QLatin1Char(' ')),
                e.note}
                .join(QLatin1Char(' '));
        bool all = true;
        for (const QString& w : words) all = all && haystack.contains(w, Qt::CaseInsensitive);
        if (all) out.append(e);
    }
    return out;
}

QString roleForFileName(const QString& fileName) {
    const QString name = QFileInfo(fileName).fileName().toLower();
    if (name.endsWith(QStringLiteral(".jinja"))) return QString::fromLatin1(kRoleTemplate);
    if (!name.endsWith(QStringLiteral(".gguf"))) return {};
    if (name.startsWith(QStringLiteral("mmproj"))) return QString::fromLatin1(kRoleProjector);
    if (name.startsWith(QStringLiteral("dflash")) || name.contains(QStringLiteral("-draft")) ||
        name.startsWith(QStringLiteral("draft")))
        return QString::fromLatin1(kRoleDraft);
    return QString::fromLatin1(kRoleModel);
}

}  // namespace ember::models
