// SPDX-License-Identifier: MIT
#include "download_job.h"

#include <QDir>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QLockFile>
#include <QLoggingCategory>
#include <QStorageInfo>
#include <QtConcurrent/QtConcurrentRun>

#include "ember/gguf.h"
#include "file_download.h"

namespace ember::models {

Q_LOGGING_CATEGORY(lcJob, "ember.models.job")

namespace {

constexpr qint64 kDiskMargin = 64ll << 20;  // left free beyond the files themselves
constexpr qint64 kSampleMs = 500;

ExpectedHash expectedHash(const HubFile& f) {
    if (!f.sha256.isEmpty()) return {HashKind::Sha256, f.sha256};
    return {HashKind::GitBlobSha1, f.gitOid};
}

// Runs the engine's full GGUF validation; "" when valid, else its one-line error.
QString validateGguf(const QString& path) {
    try {
        ember::gguf::File::open(path.toStdString());
        return {};
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
}

}  // namespace

DownloadJob::DownloadJob(QNetworkAccessManager* network, HubSettings settings, QString repo, QStringList files,
                         QString destDir, QObject* parent)
    : QObject(parent),
      m_network(network),
      m_settings(std::move(settings)),
      m_repo(std::move(repo)),
      m_requested(std::move(files)),
      m_destDir(std::move(destDir)) {
    qRegisterMetaType<ember::models::JobProgress>();
}

DownloadJob::~DownloadJob() = default;

qint64 DownloadJob::bytesStillNeeded(const QList<HubFile>& files, const QString& destDir) {
    qint64 needed = 0;
    for (const HubFile& f : files) {
        const QString final = QDir(destDir).filePath(f.path);
        const QFileInfo part(final + QStringLiteral(".part"));
        needed += std::max<qint64>(0, f.size - (part.exists() ? part.size() : 0));
    }
    return needed;
}

void DownloadJob::start() {
    m_running = true;
    m_cancelled = false;
    m_error.clear();
    m_results.clear();
    if (!isValidRepoId(m_repo))
        return finish(false, QStringLiteral("'%1' is not a repository id (owner/name)").arg(m_repo));
    for (const QString& f : m_requested)
        if (!isSafeRepoPath(f)) return finish(false, QStringLiteral("%1: '%2' is not a safe file path").arg(m_repo, f));
    if (!lockFiles()) return;
    m_listingFetch = new HubListing(m_network, m_settings, m_repo, this);
    connect(m_listingFetch, &HubListing::finished, this, &DownloadJob::onListing);
    connect(m_listingFetch, &HubListing::failed, this, [this](const QString& e) { finish(false, e); });
    m_listingFetch->start();
}

// Before the listing, so that a job that loses the race has nothing to record.
bool DownloadJob::lockFiles() {
    for (const QString& f : m_requested) {
        const QString path = QDir(m_destDir).filePath(f) + QStringLiteral(".lock");
        if (!QDir().mkpath(QFileInfo(path).absolutePath())) {
            finish(false, QStringLiteral("%1: cannot create the folder").arg(QFileInfo(path).absolutePath()));
            return false;
        }
        auto lock = std::make_unique<QLockFile>(path);
        lock->setStaleLockTime(0);  // a download may take hours: only a dead holder makes the lock stale
        if (!lock->tryLock(0)) {
            qint64 pid = 0;
            QString host, app;
            lock->getLockInfo(&pid, &host, &app);
            finish(false, lock->error() == QLockFile::LockFailedError
                              ? QStringLiteral("%1: already being downloaded by another process (pid %2)")
                                    .arg(QDir(m_destDir).filePath(f))
                                    .arg(pid)
                              : QStringLiteral("%1: cannot create the lock file").arg(path));
            return false;
        }
        m_locks.push_back(std::move(lock));
    }
    return true;
}

void DownloadJob::onListing() {
    m_listing = m_listingFetch->files();
    QList<HubFile> wanted;
    for (const QString& path : m_requested) {
        const auto it =
            std::find_if(m_listing.begin(), m_listing.end(), [&](const HubFile& f) { return f.path == path; });
        if (it == m_listing.end())
            return finish(false, QStringLiteral("%1: no file '%2' in the repository listing (%3)")
                                     .arg(m_repo, path, listingUrl(m_settings, m_repo).toString()));
        if (it->size < 0 || (it->sha256.isEmpty() && it->gitOid.isEmpty()))
            return finish(false, QStringLiteral("%1: the listing gives no size or hash for '%2'").arg(m_repo, path));
        wanted.append(*it);
    }
    if (!QDir().mkpath(m_destDir)) return finish(false, QStringLiteral("%1: cannot create the folder").arg(m_destDir));

    const qint64 needed = bytesStillNeeded(wanted, m_destDir);
    const QStorageInfo storage(m_destDir);
    if (storage.isValid() && storage.bytesAvailable() < needed + kDiskMargin)
        return finish(false, QStringLiteral("%1: not enough disk space: the download needs %2 bytes (+%3 spare), "
                                            "%4 bytes are free")
                                 .arg(m_destDir)
                                 .arg(needed)
                                 .arg(kDiskMargin)
                                 .arg(storage.bytesAvailable()));

    m_total = 0;
    for (const HubFile& f : wanted) {
        m_total += f.size;
        JobFileResult r;
        r.hub = f;
        r.path = QDir(m_destDir).filePath(f.path);
        r.checked = expectedHash(f);
        m_results.append(r);
    }
    m_doneBytes = 0;
    m_current = -1;
    m_clock.start();
    m_lastSampleMs = 0;
    m_lastSampleBytes = -1;
    m_speed = 0;
    startNextFile();
}

void DownloadJob::startNextFile() {
    if (m_cancelled) return;
    if (m_download) {
        m_doneBytes += m_download->size();
        m_download->deleteLater();
        m_download = nullptr;
    }
    if (++m_current >= m_results.size()) {
        bool ok = true;
        for (const JobFileResult& r : m_results) ok = ok && r.ready;
        return finish(ok, ok ? QString() : QStringLiteral("%1: some files failed").arg(m_repo));
    }
    const JobFileResult& r = m_results[m_current];
    m_download = new FileDownload(m_network, m_settings, resolveUrl(m_settings, m_repo, r.hub.path), r.path, r.hub.size,
                                  r.checked, this);
    connect(m_download, &FileDownload::progress, this, [this](qint64 received, qint64) { reportProgress(received); });
    connect(m_download, &FileDownload::finished, this, &DownloadJob::onFileFinished);
    m_download->start();
}

void DownloadJob::onFileFinished(bool ok) {
    JobFileResult& r = m_results[m_current];
    if (!ok) {
        r.error = m_download->error();
        Q_EMIT fileFinished(r);
        // A failed file ends the job: the unit is incomplete, and the next run resumes where this one stopped.
        m_doneBytes += m_download->received();
        return finish(false, r.error);
    }
    r.checked.hex = m_download->actualHash();
    if (r.path.endsWith(QStringLiteral(".gguf"), Qt::CaseInsensitive)) return validate(m_current);
    r.ready = true;
    Q_EMIT fileFinished(r);
    startNextFile();
}

void DownloadJob::validate(int index) {
    auto* watcher = new QFutureWatcher<QString>(this);
    connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher, index] {
        watcher->deleteLater();
        JobFileResult& r = m_results[index];
        const QString error = watcher->result();
        r.ready = error.isEmpty();
        r.error = error.isEmpty() ? QString() : QStringLiteral("GGUF validation failed: ") + error;
        Q_EMIT fileFinished(r);
        if (!r.ready) return finish(false, r.error);
        startNextFile();
    });
    watcher->setFuture(QtConcurrent::run(validateGguf, m_results[index].path));
}

void DownloadJob::reportProgress(qint64 currentReceived) {
    JobProgress p;
    p.received = m_doneBytes + currentReceived;
    p.total = m_total;
    const qint64 now = m_clock.elapsed();
    if (m_lastSampleBytes < 0) {  // the first sample: bytes resumed from .part files are not speed
        m_lastSampleMs = now;
        m_lastSampleBytes = p.received;
    } else if (now - m_lastSampleMs >= kSampleMs) {
        const double rate = (p.received - m_lastSampleBytes) * 1000.0 / std::max<qint64>(1, now - m_lastSampleMs);
        m_speed = m_speed == 0 ? rate : 0.7 * m_speed + 0.3 * rate;  // smoothed, so the ETA does not jump
        m_lastSampleMs = now;
        m_lastSampleBytes = p.received;
    }
    p.bytesPerSecond = std::max(0.0, m_speed);
    p.etaSeconds = m_speed > 1 ? static_cast<qint64>((p.total - p.received) / m_speed) : -1;
    p.currentFile = m_results.value(m_current).hub.path;
    p.fileIndex = m_current + 1;
    p.fileCount = m_results.size();
    Q_EMIT progress(p);
}

void DownloadJob::pause() {
    if (m_download) m_download->pause();
}

void DownloadJob::resume() {
    if (m_download && m_download->state() == FileDownload::State::Paused) m_download->start();
}

void DownloadJob::cancel() {
    if (!m_running) return;
    m_cancelled = true;
    if (m_download) m_download->cancel();
    finish(false, QStringLiteral("%1: cancelled; the partial files stay and the next pull resumes them").arg(m_repo));
}

void DownloadJob::finish(bool ok, const QString& error) {
    if (!m_running) return;
    m_running = false;
    m_error = error;
    m_locks.clear();  // unlocks
    if (!ok) qCDebug(lcJob).noquote() << error;
    Q_EMIT finished(ok);
}

}  // namespace ember::models
