// SPDX-License-Identifier: MIT
// ember-models fit PATH|ID: the memory a model needs at --context against this machine's memory. Before load the
// facts come from the file's header; before download (a catalog id) the sizes come from the hub's listing and the
// memory shape from the catalog.
#include <QCoreApplication>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>

#include "fit_estimate.h"
#include "memory_info.h"
#include "models_cli.h"

namespace ember::models::cli {

namespace {

void printReport(const Options& options, const QString& what, const FitReport& report, bool shapeKnown) {
    if (options.json) {
        const QJsonObject o{
            {QStringLiteral("model"), what},
            {QStringLiteral("verdict"), QString::fromStdString(std::string(verdict_name(report.verdict)))},
            {QStringLiteral("context"), static_cast<qint64>(options.context)},
            {QStringLiteral("total"), static_cast<qint64>(report.total)},
            {QStringLiteral("weights"), static_cast<qint64>(report.weights)},
            {QStringLiteral("draft_weights"), static_cast<qint64>(report.draft_weights)},
            {QStringLiteral("projector"), static_cast<qint64>(report.projector)},
            {QStringLiteral("kv_cache"), static_cast<qint64>(report.kv_cache)},
            {QStringLiteral("draft_kv_cache"), static_cast<qint64>(report.draft_kv_cache)},
            {QStringLiteral("recurrent_state"), static_cast<qint64>(report.recurrent_state)},
            {QStringLiteral("capacity"), static_cast<qint64>(report.capacity)},
            {QStringLiteral("against_gpu"), report.against_gpu},
            {QStringLiteral("shape_known"), shapeKnown}};
        out() << QJsonDocument(o).toJson(QJsonDocument::Compact) << Qt::endl;
        return;
    }
    out() << what << " at " << options.context << " tokens\n  " << QString::fromStdString(describe(report)) << "\n";
    if (!shapeKnown) out() << "  (KV cache and state unknown until the file's header is read: weights only)\n";
    out().flush();
}

// Before download: the listing's sizes and the catalog's memory shape.
int fitFromCatalog(const Options& options, const CatalogEntry& entry) {
    QNetworkAccessManager network;
    HubListing listing(&network, options.hub, entry.repo);
    QString error;
    QObject::connect(&listing, &HubListing::finished, qApp, &QCoreApplication::quit);
    QObject::connect(&listing, &HubListing::failed, qApp, [&](const QString& e) {
        error = e;
        QCoreApplication::quit();
    });
    listing.start();
    QCoreApplication::exec();
    if (!error.isEmpty()) {
        err() << error << Qt::endl;
        return 1;
    }
    FitInput in;
    for (const CatalogFile& f : entry.files) {
        const auto it = std::find_if(listing.files().begin(), listing.files().end(),
                                     [&](const HubFile& h) { return h.path == f.path; });
        if (it == listing.files().end()) {
            err() << entry.repo << ": no file '" << f.path << "' in the repository listing" << Qt::endl;
            return 1;
        }
        if (f.role == QString::fromLatin1(kRoleModel) || f.role == QString::fromLatin1(kRoleDraft))
            in.weight_bytes += static_cast<uint64_t>(it->size);
        else if (f.role == QString::fromLatin1(kRoleProjector))
            in.projector_bytes += static_cast<uint64_t>(it->size);
    }
    in.kv_bytes_per_position = entry.memory.kvBytesPerPosition;
    in.draft_kv_bytes_per_position = entry.memory.draftKvBytesPerPosition;
    in.recurrent_state_bytes = entry.memory.recurrentStateBytes;
    in.recurrent_copies = 1 + entry.memory.speculativeTokens;
    in.context = options.context;
    printReport(options, entry.id, estimate_fit(in, probe_memory()), entry.memory.known());
    return 0;
}

}  // namespace

int runFit(const Options& options, const QStringList& args) {
    if (!checkArguments(args, 1, 1, "fit PATH|ID [--context N]")) return 2;
    Library library(options.modelsDir);
    if (!loadLibrary(options, library)) return 1;
    std::optional<LibraryEntry> entry = library.find(args.first());
    if (!entry && QFileInfo(args.first()).isFile())
        entry = Library::entryForLocalFile(args.first(), QStringLiteral("folder"));
    if (!entry) {
        Catalog catalog;
        if (!loadCatalog(options, catalog)) return 1;
        if (const CatalogEntry* c = catalog.find(args.first())) return fitFromCatalog(options, *c);
        err() << args.first() << ": no such file, no such model in " << library.stateFile() << " and no such catalog id"
              << Qt::endl;
        return 1;
    }
    const ModelSummary s = summarize(*entry);
    if (!s.factsError.isEmpty()) {
        err() << s.factsError << Qt::endl;
        return 1;
    }
    const FitReport report =
        estimate_fit(fit_input(s.facts, options.context, static_cast<uint64_t>(s.projectorBytes)), probe_memory());
    printReport(options, entry->id, report, true);
    return 0;
}

}  // namespace ember::models::cli
