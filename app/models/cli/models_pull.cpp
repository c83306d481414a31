// SPDX-License-Identifier: MIT
// ember-models pull REPO|ID [FILE...]: one download job for a unit, recorded in the library whatever the outcome
// (a failed file is recorded as failed, with the reason, so that the next pull or the app can offer a re-download).
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QTimer>
#include <atomic>
#include <csignal>

#include "download_job.h"
#include "models_cli.h"
#include "models_output.h"

namespace ember::models::cli {

namespace {

std::atomic<bool> g_stopRequested{false};  // set by SIGINT/SIGTERM; the only global, a signal flag

void onStopSignal(int) {
    g_stopRequested = true;
}

struct Unit {
    QString repo;
    QStringList files;
    QString catalogId;
    QList<CatalogFile> roles;
};

bool resolveUnit(const Catalog& catalog, const QStringList& args, Unit& unit) {
    const QString first = args.first();
    const QStringList named = args.mid(1);
    if (const CatalogEntry* e = catalog.find(first)) {
        unit = {e->repo, named.isEmpty() ? e->filePaths() : named, e->id, e->files};
        return true;
    }
    unit.repo = first;
    const QList<CatalogEntry> known = catalog.forRepo(first);
    if (!named.isEmpty()) {
        unit.files = named;
        for (const CatalogEntry& e : known)
            for (const CatalogFile& f : e.files)
                if (named.contains(f.path)) unit.roles.append(f);
        if (known.size() == 1) unit.catalogId = known.first().id;
        return true;
    }
    if (known.size() == 1) {
        unit.files = known.first().filePaths();
        unit.catalogId = known.first().id;
        unit.roles = known.first().files;
        return true;
    }
    QStringList ids;
    for (const CatalogEntry& e : known) ids.append(e.id);
    err() << "ember-models pull: " << first
          << (ids.isEmpty() ? QStringLiteral(": not in the catalog; name the files to pull (pull REPO FILE...)")
                            : QStringLiteral(": several catalog units use this repository (%1); pull one by id")
                                  .arg(ids.join(QStringLiteral(", "))))
          << Qt::endl;
    return false;
}

QString roleOf(const Unit& unit, const QString& path) {
    for (const CatalogFile& f : unit.roles)
        if (f.path == path) return f.role;
    const QString byName = roleForFileName(path);
    return byName.isEmpty() ? QString::fromLatin1(kRoleTemplate) : byName;
}

QString formatEta(qint64 seconds) {
    if (seconds < 0) return QStringLiteral("--");
    if (seconds >= 3600)
        return QStringLiteral("%1h%2m").arg(seconds / 3600).arg(seconds % 3600 / 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1m%2s").arg(seconds / 60).arg(seconds % 60, 2, 10, QLatin1Char('0'));
}

// The library entry of a unit after its job: the model file gives the id; files not reached are failed.
LibraryEntry entryFor(const Unit& unit, const DownloadJob& job, const QString& destDir) {
    LibraryEntry entry;
    entry.source = QStringLiteral("hub");
    entry.repo = unit.repo;
    entry.catalogId = unit.catalogId;
    entry.added = QDateTime::currentDateTimeUtc();
    for (const QString& path : unit.files) {
        LibraryFile f;
        f.path = QDir(destDir).absoluteFilePath(path);
        f.role = roleOf(unit, path);
        f.status = QString::fromLatin1(kStatusFailed);
        f.error = QStringLiteral("not downloaded: ") +
                  (job.error().isEmpty() ? QStringLiteral("the job stopped") : job.error());
        for (const HubFile& h : job.listing())
            if (h.path == path) {
                f.size = h.size;
                f.sha256 = h.sha256;
                f.gitOid = h.gitOid;
            }
        for (const JobFileResult& r : job.results())
            if (r.hub.path == path && (r.ready || !r.error.isEmpty())) {
                f.status = QString::fromLatin1(r.ready ? kStatusReady : kStatusFailed);
                f.error = r.error;
            }
        if (f.role == QString::fromLatin1(kRoleModel) && entry.id.isEmpty())
            entry.id = unit.repo + QLatin1Char('/') + path;
        entry.files.append(f);
    }
    if (entry.id.isEmpty()) entry.id = unit.repo + QLatin1Char('/') + unit.files.first();
    return entry;
}

}  // namespace

int runPull(const Options& options, const QStringList& args) {
    if (!checkArguments(args, 1, -1, "pull REPO|ID [FILE...]")) return 2;
    Catalog catalog;
    Library library(options.modelsDir);
    if (!loadCatalog(options, catalog) || !loadLibrary(options, library)) return 1;
    Unit unit;
    if (!resolveUnit(catalog, args, unit)) return 1;
    if (!isValidRepoId(unit.repo)) {
        err() << "ember-models pull: '" << unit.repo << "' is not a repository id (owner/name)" << Qt::endl;
        return 2;
    }
    const QString destDir = QDir(options.modelsDir).filePath(unit.repo);

    QNetworkAccessManager network;
    DownloadJob job(&network, options.hub, unit.repo, unit.files, destDir);
    QElapsedTimer lastPrint;
    lastPrint.start();
    QObject::connect(&job, &DownloadJob::progress, [&](const JobProgress& p) {
        if (!options.progress || (lastPrint.elapsed() < 1000 && p.received < p.total)) return;
        lastPrint.restart();
        err() << QStringLiteral("[%1/%2] %3  %4 / %5  %6/s  ETA %7")
                     .arg(p.fileIndex)
                     .arg(p.fileCount)
                     .arg(p.currentFile, humanBytes(p.received), humanBytes(p.total),
                          humanBytes(static_cast<qint64>(p.bytesPerSecond)), formatEta(p.etaSeconds))
              << Qt::endl;
    });
    QObject::connect(&job, &DownloadJob::fileFinished, [&](const JobFileResult& r) {
        if (!options.json)
            out() << (r.ready ? "verified  " : "FAILED    ") << r.path << (r.ready ? "" : ": " + r.error) << Qt::endl;
    });
    QObject::connect(&job, &DownloadJob::finished, qApp, &QCoreApplication::quit, Qt::QueuedConnection);

    std::signal(SIGINT, onStopSignal);
    std::signal(SIGTERM, onStopSignal);
    QTimer stopPoll;
    QObject::connect(&stopPoll, &QTimer::timeout, [&] {
        if (g_stopRequested.exchange(false)) job.cancel();
    });
    stopPoll.start(100);

    job.start();
    if (job.isRunning()) QCoreApplication::exec();
    stopPoll.stop();

    const bool ok = job.isRunning() == false && job.error().isEmpty();
    if (!job.listing().isEmpty() || !job.results().isEmpty()) {
        const LibraryEntry entry = entryFor(unit, job, destDir);
        if (!loadLibrary(options, library)) return 1;  // again: another command may have changed it meanwhile
        library.upsert(entry);
        QString error;
        if (!library.save(&error)) {
            err() << error << Qt::endl;
            return 1;
        }
        const ModelSummary summary = summarize(entry);
        if (options.json) {
            QJsonObject o = entryJson(summary);
            o.insert(QStringLiteral("ok"), ok);
            if (!ok) o.insert(QStringLiteral("error"), job.error());
            out() << QJsonDocument(o).toJson(QJsonDocument::Compact) << Qt::endl;
        } else if (ok) {
            printEntry(out(), summary);
        }
    } else if (options.json) {
        out() << QJsonDocument(QJsonObject{{QStringLiteral("ok"), false}, {QStringLiteral("error"), job.error()}})
                     .toJson(QJsonDocument::Compact)
              << Qt::endl;
    }
    if (!ok) err() << "ember-models pull: " << job.error() << Qt::endl;
    return ok ? 0 : 1;
}

}  // namespace ember::models::cli
