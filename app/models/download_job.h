// SPDX-License-Identifier: MIT
// A download job: several files of one repository (a unit such as model + mmproj + chat template) fetched one
// after another into one folder. Before the first byte it reads the hub's listing (sizes and hashes) and checks the
// free disk space; after each file it validates GGUF files with the engine's validator on a worker thread.
// Progress carries the speed and the time left. Pause, resume and cancel keep the .part files for later.
//
// A job never reports a file as ready unless its hash matched the listing and (for GGUF) the validator accepted it.
// It holds a lock file ("<file>.lock") on each of its files from start to finish, so that a second job on the same
// files, in this process or another, stops at once with "already being downloaded by another process".
#pragma once

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <memory>
#include <vector>

#include "file_hasher.h"
#include "hub_client.h"

class QLockFile;
class QNetworkAccessManager;

namespace ember::models {

class FileDownload;
class HubListing;

struct JobProgress {
    qint64 received = 0;  // bytes on disk across the job's files
    qint64 total = 0;
    double bytesPerSecond = 0;  // smoothed
    qint64 etaSeconds = -1;     // -1 while unknown
    QString currentFile;
    int fileIndex = 0;  // 1-based
    int fileCount = 0;
};

struct JobFileResult {
    HubFile hub;
    QString path;          // the final path
    bool ready = false;    // hash matched and, for GGUF, the validator accepted it
    QString error;         // what failed, when not ready
    ExpectedHash checked;  // the hash that was checked (sha256 or git oid)
};

class DownloadJob : public QObject {
    Q_OBJECT
public:
    // `files`: repository paths to fetch into `destDir` (kept relative: "sub/x.gguf" lands in destDir/sub/x.gguf).
    DownloadJob(QNetworkAccessManager* network, HubSettings settings, QString repo, QStringList files, QString destDir,
                QObject* parent = nullptr);
    ~DownloadJob() override;

    void start();
    void pause();
    void resume();
    void cancel();

    bool isRunning() const { return m_running; }
    const QString& repo() const { return m_repo; }
    const QString& error() const { return m_error; }
    const QList<JobFileResult>& results() const { return m_results; }
    // The listing as read at the start (all files of the repository).
    const QList<HubFile>& listing() const { return m_listing; }

    // Bytes the job still has to write, given .part files already on disk (for the disk-space check).
    static qint64 bytesStillNeeded(const QList<HubFile>& files, const QString& destDir);

Q_SIGNALS:
    void progress(const ember::models::JobProgress& progress);
    void fileFinished(const ember::models::JobFileResult& result);
    void finished(bool ok);

private:
    bool lockFiles();
    void onListing();
    void startNextFile();
    void onFileFinished(bool ok);
    void validate(int index);
    void finish(bool ok, const QString& error = {});
    void reportProgress(qint64 currentReceived);

    QNetworkAccessManager* m_network;
    HubSettings m_settings;
    QString m_repo;
    QStringList m_requested;
    QString m_destDir;

    HubListing* m_listingFetch = nullptr;
    QList<HubFile> m_listing;
    QList<JobFileResult> m_results;
    int m_current = -1;
    FileDownload* m_download = nullptr;
    bool m_running = false;
    bool m_cancelled = false;
    QString m_error;
    std::vector<std::unique_ptr<QLockFile>> m_locks;

    qint64 m_total = 0;
    qint64 m_doneBytes = 0;  // bytes of files already finished
    QElapsedTimer m_clock;
    qint64 m_lastSampleMs = 0;
    qint64 m_lastSampleBytes = 0;
    double m_speed = 0;
};

}  // namespace ember::models

Q_DECLARE_METATYPE(ember::models::JobProgress)
