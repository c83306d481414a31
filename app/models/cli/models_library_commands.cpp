// SPDX-License-Identifier: MIT
// ember-models list | verify | rm | import | search: the library and the catalog from the command line.
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

#include "models_cli.h"
#include "models_output.h"

namespace ember::models::cli {

namespace {

void printJson(const QJsonValue& v) {
    out() << (v.isArray() ? QJsonDocument(v.toArray()) : QJsonDocument(v.toObject())).toJson(QJsonDocument::Compact)
          << Qt::endl;
}

// Prints an entry's failures, one line each; true when every file is ready.
bool reportFailures(const LibraryEntry& entry) {
    for (const LibraryFile& f : entry.files)
        if (f.status != QString::fromLatin1(kStatusReady))
            err() << (f.error.isEmpty() ? f.path + QStringLiteral(": not verified") : f.error) << Qt::endl;
    return entry.ready();
}

}  // namespace

int runList(const Options& options, const QStringList& args) {
    if (!checkArguments(args, 0, 0, "list")) return 2;
    Library library(options.modelsDir);
    if (!loadLibrary(options, library)) return 1;
    QJsonArray all;
    for (const LibraryEntry& e : library.all()) {
        const ModelSummary s = summarize(e);
        if (options.json)
            all.append(entryJson(s));
        else
            printEntry(out(), s);
    }
    if (options.json)
        printJson(all);
    else if (library.all().isEmpty())
        out() << "no models in " << library.folder() << Qt::endl;
    return 0;
}

int runSearch(const Options& options, const QStringList& args) {
    Catalog catalog;
    if (!loadCatalog(options, catalog)) return 1;
    const QList<CatalogEntry> found = catalog.search(args.join(QLatin1Char(' ')));
    QJsonArray all;
    for (const CatalogEntry& e : found) {
        if (options.json) {
            QJsonArray files;
            for (const CatalogFile& f : e.files)
                files.append(QJsonObject{{QStringLiteral("path"), f.path},
                                         {QStringLiteral("role"), f.role},
                                         {QStringLiteral("verified"), f.verified}});
            all.append(QJsonObject{{QStringLiteral("id"), e.id},
                                   {QStringLiteral("name"), e.name},
                                   {QStringLiteral("repo"), e.repo},
                                   {QStringLiteral("files"), files},
                                   {QStringLiteral("capabilities"), QJsonArray::fromStringList(e.capabilities)},
                                   {QStringLiteral("license"), e.license},
                                   {QStringLiteral("verified"), e.verified},
                                   {QStringLiteral("approx_gib"), e.approxGiB}});
            continue;
        }
        out() << e.id << "  " << e.name << "\n  " << e.repo << "  ~" << e.approxGiB << " GiB  "
              << (e.capabilities.isEmpty() ? QStringLiteral("-") : e.capabilities.join(QStringLiteral(", "))) << "  "
              << e.license << (e.verified ? "" : "  (names unverified)") << "\n";
        for (const CatalogFile& f : e.files)
            out() << "    " << f.role.leftJustified(17) << f.path << (f.verified ? "" : "  (unverified name)") << "\n";
    }
    if (options.json)
        printJson(all);
    else if (found.isEmpty())
        out() << "nothing in the catalog matches '" << args.join(QLatin1Char(' ')) << "'" << Qt::endl;
    return 0;
}

int runVerify(const Options& options, const QStringList& args) {
    if (!checkArguments(args, 1, 1, "verify PATH|ID")) return 2;
    Library library(options.modelsDir);
    if (!loadLibrary(options, library)) return 1;
    std::optional<LibraryEntry> entry = library.find(args.first());
    if (!entry) {
        if (!QFileInfo(args.first()).isFile()) {
            err() << args.first() << ": no such file and no such model in " << library.stateFile() << Qt::endl;
            return 1;
        }
        entry = Library::entryForLocalFile(args.first(), QStringLiteral("folder"));
    }
    const bool recorded = std::any_of(library.recorded().begin(), library.recorded().end(),
                                      [&](const LibraryEntry& e) { return e.id == entry->id; });
    const LibraryEntry checked = verifyEntry(*entry);
    bool saved = true;
    if (recorded) {
        library.upsert(checked);
        QString error;
        saved = library.save(&error);
        if (!saved) err() << error << Qt::endl;
    }
    const bool ok = reportFailures(checked) && saved;
    if (options.json)
        printJson(entryJson(summarize(checked)));
    else {
        for (const LibraryFile& f : checked.files)
            if (f.status == QString::fromLatin1(kStatusReady))
                out() << "verified  " << f.path << "  sha256 " << f.sha256 << "\n";
        out().flush();
    }
    return ok ? 0 : 1;
}

int runRemove(const Options& options, const QStringList& args) {
    if (!checkArguments(args, 1, 1, "rm ID|PATH")) return 2;
    Library library(options.modelsDir);
    if (!loadLibrary(options, library)) return 1;
    const std::optional<LibraryEntry> entry = library.find(args.first());
    QStringList deleted;
    QString error;
    if (!entry || !library.remove(entry->id, &deleted, &error)) {
        err() << (error.isEmpty() ? args.first() + QStringLiteral(": not in the library (") + library.stateFile() +
                                        QStringLiteral("); files found on disk are removed with the file manager")
                                  : error)
              << Qt::endl;
        return 1;
    }
    if (!library.save(&error)) {
        err() << error << Qt::endl;
        return 1;
    }
    out() << "removed " << entry->id << "\n";
    for (const QString& p : deleted) out() << "  deleted " << p << "\n";
    out().flush();
    return 0;
}

int runImport(const Options& options, const QStringList& args) {
    if (!checkArguments(args, 1, -1, "import PATH...")) return 2;
    Library library(options.modelsDir);
    if (!loadLibrary(options, library)) return 1;
    bool ok = true;
    QJsonArray imported;
    for (const QString& path : args) {
        const QFileInfo info(path);
        if (!info.isFile() || info.suffix().compare(QStringLiteral("gguf"), Qt::CaseInsensitive) != 0) {
            err() << path << ": not a .gguf file" << Qt::endl;
            ok = false;
            continue;
        }
        const LibraryEntry entry = importModel(path);
        if (!reportFailures(entry)) {
            ok = false;
            continue;
        }
        library.upsert(entry);
        const ModelSummary s = summarize(entry);
        if (options.json)
            imported.append(entryJson(s));
        else
            printEntry(out(), s);
    }
    QString error;
    if (!library.save(&error)) {
        err() << error << Qt::endl;
        return 1;
    }
    if (options.json) printJson(imported);
    out().flush();
    return ok ? 0 : 1;
}

}  // namespace ember::models::cli
