// SPDX-License-Identifier: MIT
// Drives a DownloadJob through pause and resume for download_test.py (the CLI has no pause):
//   download_job_driver BASE_URL REPO FILE DEST_DIR PAUSE_AT_BYTES
// pauses once PAUSE_AT_BYTES are on disk, waits 500 ms, resumes, and prints one JSON line with what it saw.
#include <QCoreApplication>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QTimer>
#include <cstdio>

#include "download_job.h"

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    if (args.size() != 6) {
        std::fprintf(stderr, "usage: download_job_driver BASE_URL REPO FILE DEST_DIR PAUSE_AT_BYTES\n");
        return 2;
    }
    ember::models::HubSettings hub;
    hub.baseUrl = QUrl(args[1]);
    hub.stallTimeoutMs = 5000;
    hub.retryBaseMs = 50;
    const QString part = args[4] + QLatin1Char('/') + args[3] + QStringLiteral(".part");
    const qint64 pauseAt = args[5].toLongLong();

    QNetworkAccessManager network;
    ember::models::DownloadJob job(&network, hub, args[2], {args[3]}, args[4]);
    QJsonObject seen;
    bool paused = false;
    int eventsWhilePaused = 0;
    QObject::connect(&job, &ember::models::DownloadJob::progress, [&](const ember::models::JobProgress& p) {
        if (paused) ++eventsWhilePaused;
        if (paused || seen.contains(QStringLiteral("paused_at")) || p.received < pauseAt) return;
        job.pause();
        paused = true;
        seen.insert(QStringLiteral("paused_at"), p.received);
        seen.insert(QStringLiteral("part_at_pause"), QFileInfo(part).size());
        QTimer::singleShot(500, [&] {
            seen.insert(QStringLiteral("part_after_wait"), QFileInfo(part).size());
            seen.insert(QStringLiteral("events_while_paused"), eventsWhilePaused);
            paused = false;
            job.resume();
        });
    });
    QObject::connect(&job, &ember::models::DownloadJob::finished, [&](bool ok) {
        seen.insert(QStringLiteral("ok"), ok);
        seen.insert(QStringLiteral("error"), job.error());
        std::printf("%s\n", QJsonDocument(seen).toJson(QJsonDocument::Compact).constData());
        app.quit();
    });
    job.start();
    return app.exec() == 0 && job.error().isEmpty() ? 0 : 1;
}
