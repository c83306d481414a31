// SPDX-License-Identifier: MIT
#include "model_manager.h"

#include <QDateTime>
#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QUrl>
#include <QtConcurrent/QtConcurrentRun>

#include "download_job.h"
#include "memory_info.h"
#include "ui/assign_if_changed.h"

namespace ember::desktop {

Q_LOGGING_CATEGORY(lcManager, "ember.desktop.models")

namespace {

QString roleOf(const models::CatalogEntry& entry, const QString& path) {
    for (const models::CatalogFile& f : entry.files)
        if (f.path == path) return f.role;
    const QString byName = models::roleForFileName(path);
    return byName.isEmpty() ? QString::fromLatin1(models::kRoleTemplate) : byName;
}

// The library entry for a finished (or failed) download job: each file with its hash and status.
models::LibraryEntry entryForJob(const models::CatalogEntry& unit, const models::DownloadJob& job,
                                 const QString& destDir) {
    models::LibraryEntry entry;
    entry.source = QStringLiteral("hub");
    entry.repo = unit.repo;
    entry.catalogId = unit.id;
    entry.added = QDateTime::currentDateTimeUtc();
    for (const QString& path : unit.filePaths()) {
        models::LibraryFile f;
        f.path = QDir(destDir).absoluteFilePath(path);
        f.role = roleOf(unit, path);
        f.status = QString::fromLatin1(models::kStatusFailed);
        f.error = QStringLiteral("not downloaded: ") + (job.error().isEmpty() ? QStringLiteral("the job stopped")
                                                                            : job.error());
        for (const models::HubFile& h : job.listing())
            if (h.path == path) {
                f.size = h.size;
                f.sha256 = h.sha256;
                f.gitOid = h.gitOid;
            }
        for (const models::JobFileResult& r : job.results())
            if (r.hub.path == path && (r.ready || !r.error.isEmpty())) {
                f.status = QString::fromLatin1(r.ready ? models::kStatusReady : models::kStatusFailed);
                f.error = r.error;
            }
        if (f.role == QLatin1String(models::kRoleModel) && entry.id.isEmpty())
            entry.id = unit.repo + QLatin1Char('/') + path;
        entry.files.append(f);
    }
    if (entry.id.isEmpty() && !unit.files.isEmpty()) entry.id = unit.repo + QLatin1Char('/') + unit.files.first().path;
    return entry;
}

QString localPath(const QString& pathOrUrl) {
    const QUrl url(pathOrUrl);
    return url.isLocalFile() ? url.toLocalFile() : pathOrUrl;
}

}  // namespace

ModelManager::ModelManager(const QString& folder, bool offline, QObject* parent)
    : QObject(parent), m_folder(folder.isEmpty() ? models::Library::defaultFolder() : folder), m_offline(offline) {
    m_io.setMaxThreadCount(1);
    for (const char* env : {"EMBER_HUB_URL", "HF_ENDPOINT"})
        if (const QString v = qEnvironmentVariable(env); !v.isEmpty() && m_hub.baseUrl.host() == "huggingface.co")
            m_hub.baseUrl = QUrl(v);
    m_hub.token = qEnvironmentVariable("HF_TOKEN");
    QString error;
    const QString catalogFile = qEnvironmentVariable("EMBER_CATALOG");
    const models::Catalog catalog =
        catalogFile.isEmpty() ? models::Catalog::builtIn() : models::Catalog::fromFile(catalogFile, &error);
    if (!error.isEmpty()) setNotice(error);
    m_catalog.setCatalog(catalog, models::probe_memory());  // /proc/meminfo: no disk involved
}

ModelManager::~ModelManager() {
    for (models::DownloadJob* job : std::as_const(m_jobs)) job->pause();  // keeps the .part files for next time
    m_io.waitForDone();
}

void ModelManager::setNotice(const QString& notice) {
    if (!assignIfChanged(m_notice, notice)) return;
    Q_EMIT noticeChanged();
}

void ModelManager::clearNotice() {
    setNotice({});
}

void ModelManager::mutateLibrary(std::function<bool(models::Library&, LibraryResult&)> change,
                                 std::function<void(const LibraryResult&)> done) {
    ++m_pending;
    Q_EMIT busyChanged();
    const QString folder = m_folder;
    QtConcurrent::run(&m_io, [folder, change] {
        LibraryResult result;
        models::Library library(folder);
        QString error;
        if (!library.load(&error)) {
            result.ok = false;
            result.error = error;
        } else if (change && change(library, result) && !library.save(&error)) {
            result.ok = false;
            result.error = error;
        }
        for (const models::LibraryEntry& e : library.all()) result.summaries.append(models::summarize(e));
        return result;
    }).then(this, [this, done](const LibraryResult& result) {
        --m_pending;
        m_library.setSummaries(result.summaries);
        m_libraryLoaded = true;
        updateCatalogState();
        if (!result.error.isEmpty()) setNotice(result.error);
        Q_EMIT busyChanged();
        Q_EMIT libraryChanged();
        if (done) done(result);
    });
}

void ModelManager::refreshLibrary() {
    mutateLibrary({});
}

void ModelManager::updateCatalogState() {
    QSet<QString> inLibrary, downloading;
    for (const models::ModelSummary& s : m_library.summaries())
        if (!s.entry.catalogId.isEmpty() && s.entry.ready()) inLibrary.insert(s.entry.catalogId);
    for (auto it = m_jobs.constBegin(); it != m_jobs.constEnd(); ++it) downloading.insert(it.key());
    m_catalog.setState(inLibrary, downloading);
}

void ModelManager::importModel(const QString& pathOrUrl) {
    const QString path = localPath(pathOrUrl);
    if (path.isEmpty()) return;
    setNotice(QStringLiteral("Importing ") + QFileInfo(path).fileName() + QStringLiteral("…"));
    mutateLibrary(
        [path](models::Library& library, LibraryResult& result) {
            const models::LibraryEntry entry = models::importModel(path);
            library.upsert(entry);
            result.modelPath = path;
            for (const models::LibraryFile& f : entry.files)
                if (f.status != QLatin1String(models::kStatusReady)) {
                    result.ok = false;
                    result.error = f.error.isEmpty() ? f.path + QStringLiteral(": not verified") : f.error;
                }
            return true;
        },
        [this](const LibraryResult& result) {
            if (result.ok) setNotice(QFileInfo(result.modelPath).fileName() + QStringLiteral(" is in the library."));
            Q_EMIT imported(result.modelPath, result.ok);
        });
}

void ModelManager::verify(const QString& entryId) {
    mutateLibrary([entryId](models::Library& library, LibraryResult& result) {
        const auto entry = library.find(entryId);
        if (!entry) {
            result.error = entryId + QStringLiteral(": not in the library");
            return false;
        }
        library.upsert(models::verifyEntry(*entry));
        return true;
    });
}

void ModelManager::remove(const QString& entryId) {
    mutateLibrary([entryId](models::Library& library, LibraryResult& result) {
        QStringList deleted;
        QString error;
        if (!library.remove(entryId, &deleted, &error)) {
            result.error = error;
            return false;
        }
        return true;
    });
}

void ModelManager::reveal(const QString& entryId) {
    for (const models::ModelSummary& s : m_library.summaries())
        if (s.entry.id == entryId)
            QDesktopServices::openUrl(QUrl::fromLocalFile(models::Library::revealFolder(s.entry)));
}

void ModelManager::setProjector(const QString& entryId, const QString& pathOrUrl) {
    const QString path = pathOrUrl.isEmpty() ? QString() : localPath(pathOrUrl);
    mutateLibrary([entryId, path](models::Library& library, LibraryResult& result) {
        const auto entry = library.find(entryId);
        if (!entry) {
            result.error = entryId + QStringLiteral(": not in the library");
            return false;
        }
        library.upsert(entry->withProjector(path));
        return true;
    });
}

QString ModelManager::projectorFor(const QString& modelPath) const {
    const QString role = QString::fromLatin1(models::kRoleProjector);
    for (const models::ModelSummary& s : m_library.summaries())
        for (const models::LibraryFile& f : s.entry.files)
            if (f.role == QLatin1String(models::kRoleModel) && f.path == modelPath)
                if (const models::LibraryFile* p = s.entry.fileWithRole(role)) return p->path;
    return {};
}

void ModelManager::download(const QString& catalogId) {
    const models::CatalogEntry* unit = m_catalog.entry(catalogId);
    if (!unit || m_jobs.contains(catalogId)) return;
    if (m_offline) {
        setNotice(QStringLiteral("Ember runs offline: downloads are off. Import a model file instead."));
        return;
    }
    const QString destDir = QDir(m_folder).filePath(unit->repo);
    auto* job = new models::DownloadJob(&m_network, m_hub, unit->repo, unit->filePaths(), destDir, this);
    m_jobs.insert(catalogId, job);
    DownloadRow row;
    row.catalogId = catalogId;
    row.name = unit->name;
    row.repo = unit->repo;
    row.state = QStringLiteral("running");
    row.fileCount = static_cast<int>(unit->files.size());
    m_downloads.upsert(row);
    connect(job, &models::DownloadJob::progress, this, [this, catalogId](const models::JobProgress& p) {
        const DownloadRow* current = m_downloads.row(catalogId);
        if (!current) return;
        DownloadRow r = *current;
        r.received = p.received;
        r.total = p.total;
        r.bytesPerSecond = p.bytesPerSecond;
        r.etaSeconds = p.etaSeconds;
        r.currentFile = p.currentFile;
        r.fileIndex = p.fileIndex;
        r.fileCount = p.fileCount;
        m_downloads.upsert(r);
    });
    connect(job, &models::DownloadJob::finished, this, [this, catalogId](bool ok) { onJobFinished(catalogId, ok); });
    updateCatalogState();
    job->start();
}

void ModelManager::onJobFinished(const QString& catalogId, bool ok) {
    models::DownloadJob* job = m_jobs.value(catalogId);
    const models::CatalogEntry* unit = m_catalog.entry(catalogId);
    if (!job || !unit) return;
    const DownloadRow* current = m_downloads.row(catalogId);
    DownloadRow r = current ? *current : DownloadRow();
    if (r.state == QLatin1String("paused") && !ok) return;  // a pause ends the transfer, not the job
    r.state = ok ? QStringLiteral("done") : (r.state == QLatin1String("cancelled") ? r.state : QStringLiteral("failed"));
    r.error = ok ? QString() : job->error();
    m_downloads.upsert(r);
    // A job that never reached its listing (e.g. another process holds the files' lock) learned nothing about the
    // files: recording it would mark a good entry failed.
    const bool learned = !job->listing().isEmpty() || !job->results().isEmpty();
    const models::LibraryEntry entry = entryForJob(*unit, *job, QDir(m_folder).filePath(unit->repo));
    m_jobs.remove(catalogId);
    job->deleteLater();
    updateCatalogState();
    if (!learned) {
        Q_EMIT downloadFinished(catalogId, QString(), ok);
        return;
    }
    const models::LibraryFile* model = entry.fileWithRole(QString::fromLatin1(models::kRoleModel));
    const QString modelPath = model ? model->path : QString();
    mutateLibrary(
        [entry](models::Library& library, LibraryResult&) {
            library.upsert(entry);
            return true;
        },
        [this, catalogId, modelPath, ok](const LibraryResult&) { Q_EMIT downloadFinished(catalogId, modelPath, ok); });
}

models::DownloadJob* ModelManager::showDownloadState(const QString& catalogId, const QString& state) {
    models::DownloadJob* job = m_jobs.value(catalogId);
    const DownloadRow* current = m_downloads.row(catalogId);
    if (!job || !current) return nullptr;
    DownloadRow r = *current;
    r.state = state;
    m_downloads.upsert(r);
    return job;
}

void ModelManager::pauseDownload(const QString& catalogId) {
    if (models::DownloadJob* job = showDownloadState(catalogId, QStringLiteral("paused"))) job->pause();
}

void ModelManager::resumeDownload(const QString& catalogId) {
    if (models::DownloadJob* job = showDownloadState(catalogId, QStringLiteral("running"))) job->resume();
}

void ModelManager::cancelDownload(const QString& catalogId) {
    if (models::DownloadJob* job = showDownloadState(catalogId, QStringLiteral("cancelled"))) job->cancel();
}

void ModelManager::clearDownload(const QString& catalogId) {
    if (!m_jobs.contains(catalogId)) m_downloads.remove(catalogId);
}

}  // namespace ember::desktop
