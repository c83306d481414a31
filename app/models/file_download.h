// SPDX-License-Identifier: MIT
// One file from the hub into a folder: streamed into "<final>.part" (resumed with an HTTP Range request after a
// drop, a restart or a crash), hashed while it streams, checked again from disk, then renamed atomically to its
// final name. Redirects are followed by hand so that the hub token never travels to another host.
//
// It never leaves a file under the final name whose hash did not match, never retries a fatal error (404, a full
// disk, a hash mismatch, a body that is not the file: an HTML page, no GGUF magic, a size other than listed) and
// never writes more bytes than the listing's size. Retries are bounded by attempts without progress and by bytes
// thrown away; a server that ignores Range gets one restart from byte 0.
#pragma once

#include <QFile>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>
#include <QUrl>

#include "file_hasher.h"
#include "hub_client.h"

class QNetworkAccessManager;
class QNetworkReply;

namespace ember::models {

class FileDownload : public QObject {
    Q_OBJECT
public:
    enum class State { Idle, Running, Waiting, Paused, Verifying, Done, Failed, Cancelled };

    FileDownload(QNetworkAccessManager* network, HubSettings settings, QUrl url, QString finalPath, qint64 size,
                 ExpectedHash expected, QObject* parent = nullptr);

    void start();   // also resumes after pause() or cancel()
    void pause();   // stops the transfer, keeps the .part
    void cancel();  // the same, ending in Cancelled; the .part stays for a later resume

    State state() const { return m_state; }
    qint64 received() const { return m_offset; }
    qint64 size() const { return m_size; }
    const QString& error() const { return m_error; }
    const QString& finalPath() const { return m_finalPath; }
    QString partPath() const { return m_finalPath + QStringLiteral(".part"); }
    QString metaPath() const { return m_finalPath + QStringLiteral(".part.json"); }
    // The content hash that was checked (algorithm of `expected`), once Done.
    const QString& actualHash() const { return m_actualHash; }

Q_SIGNALS:
    void progress(qint64 received, qint64 total);
    void finished(bool ok);

private:
    void checkExistingFile();
    void beginAttempt();
    void sendRequest(const QUrl& url, int redirects);
    void onMetaData();
    void onReadyRead();
    void consume(QByteArray data, bool bodyEnded);
    void onFinished(QNetworkReply* reply, int redirects);
    void retryLater(const QString& why);
    void finishStreaming();
    void checkFromDisk();
    void fail(const QString& error);
    void stopTransfer();
    bool preparePartFile();
    void truncatePart(qint64 size);

    QNetworkAccessManager* m_network;
    HubSettings m_settings;
    QUrl m_url;
    QString m_finalPath;
    qint64 m_size;
    ExpectedHash m_expected;

    State m_state = State::Idle;
    QFile m_part;
    StreamHasher m_hasher;
    qint64 m_hashedUpTo = -1;    // bytes of the .part the streaming hash has seen; -1: needs a reset
    qint64 m_offset = 0;         // bytes in the .part
    qint64 m_furthest = 0;       // the most bytes the .part has held; only bytes beyond it are progress
    qint64 m_wasted = 0;         // bytes received and then thrown away (restarts from byte 0)
    int m_retries = 0;           // attempts in a row without progress
    int m_rangeRestarts = 0;     // resumes the server answered with the whole file
    bool m_headPending = false;  // the body starts the file: its first bytes are held in m_head until checked
    QByteArray m_head;
    QPointer<QNetworkReply> m_reply;
    bool m_bodyAccepted = false;  // the current response is a 200/206 whose headers matched
    QString m_attemptError;       // why the current response was aborted (retryable)
    QString m_fatalError;         // why it was aborted (not retryable)
    QString m_error;
    QString m_actualHash;
    QTimer m_retryTimer;
};

}  // namespace ember::models
