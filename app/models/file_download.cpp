// SPDX-License-Identifier: MIT
#include "file_download.h"

#include <QDir>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QLoggingCategory>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>
#include <filesystem>

#include "download_manifest.h"
#include "state_file.h"

namespace ember::models {

Q_LOGGING_CATEGORY(lcDownload, "ember.models.download")

namespace {

constexpr int kMaxBackoffMs = 60000;
constexpr qint64 kHeadBytes = 64;                  // the first bytes of the file, checked before they are written
constexpr qint64 kMinProgressBytes = 1ll << 20;    // an attempt that keeps this many new bytes resets the retries
constexpr qint64 kMinWasteAllowance = 16ll << 20;  // bytes that may be thrown away, at least (else the file size)
constexpr qint64 kMaxManifestBytes = 64ll << 10;

bool isHtmlContentType(const QVariant& header) {
    return header.toString().trimmed().startsWith(QStringLiteral("text/html"), Qt::CaseInsensitive);
}

// What the first bytes of a body say when they are not the file: an HTML page (an error or login page served with
// status 200) or, for a .gguf, anything without the GGUF magic. "" when they may be the file.
QString wrongHead(const QByteArray& head, bool gguf) {
    QByteArray text = head.first(std::min<qsizetype>(head.size(), 32)).trimmed().toLower();
    if (text.startsWith("\xef\xbb\xbf")) text = text.mid(3).trimmed();
    for (const char* tag : {"<!doctype html", "<html", "<head", "<body", "<title"})
        if (text.startsWith(tag)) return QStringLiteral("an HTML page, not the file");
    if (gguf && head.size() >= 4 && !head.startsWith("GGUF"))
        return QStringLiteral("not a GGUF file: it starts with %1, not the magic \"GGUF\"")
            .arg(QString::fromLatin1(head.first(std::min<qsizetype>(4, head.size())).toHex(' ')));
    return {};
}

// "bytes START-END/TOTAL" -> {start, end, total}; total is -1 for "*".
bool parseContentRange(const QByteArray& header, qint64& start, qint64& end, qint64& total) {
    static const QRegularExpression re(QStringLiteral(R"(^bytes\s+(\d+)-(\d+)/(\d+|\*)$)"));
    const QRegularExpressionMatch m = re.match(QString::fromLatin1(header).trimmed());
    if (!m.hasMatch()) return false;
    start = m.captured(1).toLongLong();
    end = m.captured(2).toLongLong();
    total = m.captured(3) == QStringLiteral("*") ? -1 : m.captured(3).toLongLong();
    return true;
}

}  // namespace

FileDownload::FileDownload(QNetworkAccessManager* network, HubSettings settings, QUrl url, QString finalPath,
                           qint64 size, ExpectedHash expected, QObject* parent)
    : QObject(parent),
      m_network(network),
      m_settings(std::move(settings)),
      m_url(std::move(url)),
      m_finalPath(std::move(finalPath)),
      m_size(size),
      m_expected(std::move(expected)) {
    m_retryTimer.setSingleShot(true);
    connect(&m_retryTimer, &QTimer::timeout, this, &FileDownload::beginAttempt);
}

void FileDownload::start() {
    if (m_state == State::Running || m_state == State::Waiting || m_state == State::Verifying) return;
    m_retries = 0;
    m_wasted = 0;
    m_rangeRestarts = 0;
    m_error.clear();
    const QFileInfo final(m_finalPath);
    if (final.isFile() && final.size() == m_size && !QFile::exists(partPath())) return checkExistingFile();
    m_state = State::Running;
    beginAttempt();
}

// A file already under its final name (an earlier pull) is hashed instead of downloaded again; a mismatch (a
// changed or damaged file) is replaced by a fresh download.
void FileDownload::checkExistingFile() {
    m_state = State::Verifying;
    auto* watcher = new QFutureWatcher<QString>(this);
    connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher] {
        watcher->deleteLater();
        if (m_state != State::Verifying) return;
        const QString hex = watcher->result();
        if (!m_expected.hex.isEmpty() && hex == m_expected.hex) {
            m_actualHash = hex;
            m_offset = m_size;
            QFile::remove(metaPath());  // left behind by a crash between the rename and its removal
            m_state = State::Done;
            Q_EMIT progress(m_size, m_size);
            Q_EMIT finished(true);
            return;
        }
        qCInfo(lcDownload).noquote() << m_finalPath << "does not match the listing; downloading it again";
        if (!QFile::remove(m_finalPath)) return fail(QStringLiteral("%1: cannot replace the file").arg(m_finalPath));
        m_state = State::Running;
        beginAttempt();
    });
    watcher->setFuture(hashFileAsync(m_finalPath, m_expected.kind));
}

void FileDownload::pause() {
    if (m_state != State::Running && m_state != State::Waiting) return;
    m_state = State::Paused;
    stopTransfer();
}

void FileDownload::cancel() {
    if (m_state == State::Done || m_state == State::Failed || m_state == State::Verifying) return;
    m_state = State::Cancelled;
    stopTransfer();
}

void FileDownload::stopTransfer() {
    m_retryTimer.stop();
    if (m_reply) m_reply->abort();  // onFinished sees the state and stops there
    m_part.close();
}

// The .part and its metadata: a .part written for another version of the file (another hash or size) is dropped,
// so that a resume never splices two versions together.
bool FileDownload::preparePartFile() {
    if (!QDir().mkpath(QFileInfo(m_finalPath).absolutePath())) {
        fail(QStringLiteral("%1: cannot create the folder").arg(QFileInfo(m_finalPath).absolutePath()));
        return false;
    }
    const DownloadManifest wanted{m_url.toString(), m_size, m_expected.hex};
    DownloadManifest found;
    QString why;
    QFile metaFile(metaPath());
    const bool sameVersion = !m_expected.hex.isEmpty() && metaFile.open(QIODevice::ReadOnly) &&
                             parseDownloadManifest(metaFile.read(kMaxManifestBytes), found, why) &&
                             found.hash == wanted.hash && found.size == wanted.size;
    metaFile.close();
    if (!sameVersion) {
        if (!why.isEmpty()) qCInfo(lcDownload).noquote() << metaPath() << "is not a manifest:" << why;
        QFile::remove(partPath());
        m_hashedUpTo = -1;
        QString error;
        if (!writeStateFile(metaPath(), downloadManifestJson(wanted), &error)) {
            fail(error);
            return false;
        }
    }
    m_part.setFileName(partPath());
    if (!m_part.open(QIODevice::WriteOnly | QIODevice::Append | QIODevice::Unbuffered)) {
        fail(QStringLiteral("%1: cannot open for writing: %2").arg(partPath(), m_part.errorString()));
        return false;
    }
    m_offset = m_part.size();
    if (m_offset > m_size) truncatePart(0);
    m_furthest = m_offset;
    return true;
}

void FileDownload::truncatePart(qint64 size) {
    m_part.resize(size);
    m_offset = size;
    m_hashedUpTo = -1;
}

void FileDownload::beginAttempt() {
    if (m_state != State::Running && m_state != State::Waiting) return;
    m_state = State::Running;
    if (!m_part.isOpen() && !preparePartFile()) return;
    if (m_hashedUpTo != m_offset) {
        m_hasher.reset(m_expected.kind, m_size, partPath(), m_offset);
        m_hashedUpTo = m_offset;
    }
    Q_EMIT progress(m_offset, m_size);
    if (m_offset == m_size) return finishStreaming();
    sendRequest(m_url, 0);
}

void FileDownload::sendRequest(const QUrl& url, int redirects) {
    QNetworkRequest request = hubRequest(m_settings, url);
    request.setTransferTimeout(m_settings.stallTimeoutMs);
    request.setRawHeader("Accept-Encoding", "identity");  // byte ranges of the file itself, never of a gzip stream
    if (m_offset > 0) request.setRawHeader("Range", "bytes=" + QByteArray::number(m_offset) + '-');
    m_bodyAccepted = false;
    m_headPending = false;
    m_attemptError.clear();
    m_fatalError.clear();
    QNetworkReply* reply = m_network->get(request);
    m_reply = reply;
    connect(reply, &QNetworkReply::metaDataChanged, this, &FileDownload::onMetaData);
    connect(reply, &QNetworkReply::readyRead, this, &FileDownload::onReadyRead);
    connect(reply, &QNetworkReply::finished, this, [this, reply, redirects] { onFinished(reply, redirects); });
}

// The headers of a 200/206: whatever says the body is not the listed file fails at once (it would fail the same way
// on every retry); a range that does not fit the request is retried.
void FileDownload::onMetaData() {
    QNetworkReply* reply = m_reply;
    if (!reply || m_bodyAccepted) return;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status != 200 && status != 206) return;  // redirects and errors: handled when the reply finishes
    const QString where = reply->url().toString();
    const QVariant lengthHeader = reply->header(QNetworkRequest::ContentLengthHeader);
    const qint64 length = lengthHeader.isValid() ? lengthHeader.toLongLong() : -1;
    if (isHtmlContentType(reply->header(QNetworkRequest::ContentTypeHeader))) {
        m_fatalError = QStringLiteral("%1: the server sent an HTML page (Content-Type %2), not the file")
                           .arg(where, reply->header(QNetworkRequest::ContentTypeHeader).toString());
    } else if (status == 206) {
        qint64 start = 0, end = 0, total = 0;
        if (!parseContentRange(reply->rawHeader("Content-Range"), start, end, total)) {
            m_attemptError = QStringLiteral("%1: HTTP 206 without a valid Content-Range").arg(where);
        } else if (total >= 0 && total != m_size) {
            m_fatalError = QStringLiteral(
                               "%1: the server's file is %2 bytes, the listing says %3: it is not the "
                               "listed file")
                               .arg(where)
                               .arg(total)
                               .arg(m_size);
        } else if (start != m_offset || end >= m_size) {
            m_attemptError = QStringLiteral("%1: Content-Range '%2' does not match the request from byte %3 of %4")
                                 .arg(where, QString::fromLatin1(reply->rawHeader("Content-Range")))
                                 .arg(m_offset)
                                 .arg(m_size);
        } else if (length >= 0 && length != end - start + 1) {
            m_fatalError = QStringLiteral("%1: wrong Content-Length %2 for range %3-%4: the body is not the file")
                               .arg(where)
                               .arg(length)
                               .arg(start)
                               .arg(end);
        }
    } else if (length >= 0 && length != m_size) {
        m_fatalError = QStringLiteral(
                           "%1: wrong Content-Length %2, the listing says %3 bytes: the body is not the "
                           "listed file")
                           .arg(where)
                           .arg(length)
                           .arg(m_size);
    } else if (m_offset > 0) {
        // A resume answered with the whole file: start over from byte 0 once (the .part is replaced only when the
        // new body's first bytes check); a server that does it again is given up on.
        if (m_rangeRestarts > 0)
            m_fatalError = QStringLiteral(
                               "%1: the server ignores Range requests (HTTP 200 to a resume from byte %2, "
                               "again after one restart from byte 0)")
                               .arg(where)
                               .arg(m_offset);
        else
            qCInfo(lcDownload).noquote() << where << "ignored the Range request from byte" << m_offset
                                         << "; downloading from the start";
        ++m_rangeRestarts;
    }
    if (!m_fatalError.isEmpty() || !m_attemptError.isEmpty()) {
        reply->abort();
        return;
    }
    m_bodyAccepted = true;
    m_headPending = status == 200;
    m_head.clear();
}

void FileDownload::onReadyRead() {
    QNetworkReply* reply = m_reply;
    if (!reply) return;
    if (!m_bodyAccepted) {
        reply->skip(reply->bytesAvailable());
        return;
    }
    consume(reply->readAll(), false);
}

// Body bytes into the .part. A body that starts the file is held until its first bytes are known to be the file.
void FileDownload::consume(QByteArray data, bool bodyEnded) {
    QNetworkReply* reply = m_reply;
    const QString where = reply ? reply->url().toString() : m_url.toString();
    if (m_headPending) {
        m_head += data;
        const bool isShort = m_head.size() < std::min(kHeadBytes, m_size);
        if (isShort && !bodyEnded) return;  // not enough yet
        const QString wrong = wrongHead(m_head, m_finalPath.endsWith(QStringLiteral(".gguf"), Qt::CaseInsensitive));
        if (!wrong.isEmpty()) {
            m_fatalError = QStringLiteral("%1: the body is %2").arg(where, wrong);
            if (reply && !bodyEnded) reply->abort();
            return;
        }
        if (isShort) return;  // a body cut off before its first bytes could be checked: not written, retried
        m_headPending = false;
        data = std::exchange(m_head, {});
        if (m_offset > 0) {  // the restart the server forced: what the .part held is thrown away
            m_wasted += m_offset;
            truncatePart(0);
        }
        if (m_hashedUpTo != 0) {
            m_hasher.reset(m_expected.kind, m_size);
            m_hashedUpTo = 0;
        }
    }
    if (data.isEmpty()) return;
    if (m_offset + data.size() > m_size) {
        // Longer than listed: not the listed file, and a resume would splice two versions; nothing of it is kept.
        m_fatalError = QStringLiteral(
                           "%1: the body is longer than the listed %2 bytes: the server's file is not the "
                           "listed one; the partial download was removed")
                           .arg(where)
                           .arg(m_size);
        m_wasted += m_offset;
        truncatePart(0);
        QFile::remove(metaPath());
        if (reply && !bodyEnded) reply->abort();
        return;
    }
    qint64 written = 0;  // until a write fails: a short write sets no error, the next one says why (ENOSPC)
    for (qint64 n = 0; written < data.size(); written += n)
        if ((n = m_part.write(data.constData() + written, data.size() - written)) <= 0) break;
    if (written != data.size()) {
        // Keep the .part consistent with what was hashed: cut off a partial write.
        const QString why = m_part.errorString();
        m_part.resize(m_offset);
        m_fatalError = QStringLiteral("%1: write failed after %2 bytes: %3 (is the disk full?)")
                           .arg(partPath())
                           .arg(m_offset)
                           .arg(why);
        if (reply && !bodyEnded) reply->abort();
        return;
    }
    m_hasher.addData(data);
    m_offset += written;
    m_hashedUpTo = m_offset;
    Q_EMIT progress(m_offset, m_size);
}

void FileDownload::onFinished(QNetworkReply* reply, int redirects) {
    reply->deleteLater();
    if (reply != m_reply) return;
    m_reply = nullptr;
    if (m_state != State::Running) return;  // paused or cancelled: the .part stays as it is
    if (m_bodyAccepted && m_fatalError.isEmpty() && m_attemptError.isEmpty())
        consume(reply->readAll(), reply->error() == QNetworkReply::NoError);
    if (!m_fatalError.isEmpty()) return fail(m_fatalError);

    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QString where = reply->url().toString();
    if (status >= 300 && status < 400) {
        const QUrl target = redirectTarget(reply);
        if (!target.isValid() || target.isEmpty())
            return fail(QStringLiteral("%1: HTTP %2 without a Location").arg(where).arg(status));
        if (redirects >= m_settings.maxRedirects)
            return fail(
                QStringLiteral("%1: more than %2 redirects").arg(m_url.toString()).arg(m_settings.maxRedirects));
        if (target.scheme() != QStringLiteral("http") && target.scheme() != QStringLiteral("https"))
            return fail(QStringLiteral("%1: redirect to unsupported URL %2").arg(where, target.toString()));
        return sendRequest(target, redirects + 1);
    }
    if (status == 404) return fail(QStringLiteral("%1: HTTP 404 Not Found").arg(where));
    if (status == 401 || status == 403)
        return fail(
            QStringLiteral("%1: HTTP %2: access denied (a gated repository needs a hub token)").arg(where).arg(status));
    if (status == 416) {
        if (m_offset == m_size) return finishStreaming();
        const qint64 from = m_offset;
        m_wasted += from;
        truncatePart(0);
        return retryLater(
            QStringLiteral("%1: HTTP 416 Range Not Satisfiable for a resume from byte %2 of %3; starting over")
                .arg(where)
                .arg(from)
                .arg(m_size));
    }
    // Progress resets the retries (a flaky link is not a dead one), but only bytes beyond any kept before: bytes
    // received again after a restart, or thrown away, are not progress.
    if (m_offset - m_furthest >= std::min(kMinProgressBytes, m_size - m_furthest) && m_offset > m_furthest)
        m_retries = 0;
    m_furthest = std::max(m_furthest, m_offset);
    if (!m_attemptError.isEmpty()) return retryLater(m_attemptError);
    if (status >= 400) return retryLater(QStringLiteral("%1: HTTP %2").arg(where).arg(status));
    if (reply->error() != QNetworkReply::NoError) {
        const QString why = reply->error() == QNetworkReply::OperationCanceledError
                                ? QStringLiteral("no data for %1 s (stalled)").arg(m_settings.stallTimeoutMs / 1000.0)
                                : reply->errorString();
        return retryLater(QStringLiteral("%1: %2 after %3 of %4 bytes").arg(where, why).arg(m_offset).arg(m_size));
    }
    if (status != 200 && status != 206) return retryLater(QStringLiteral("%1: HTTP %2").arg(where).arg(status));
    if (m_offset < m_size)
        return retryLater(
            QStringLiteral("%1: body ended after %2 of %3 bytes (truncated)").arg(where).arg(m_offset).arg(m_size));
    finishStreaming();
}

void FileDownload::retryLater(const QString& why) {
    if (m_retries >= m_settings.maxRetries)
        return fail(QStringLiteral("%1 (gave up after %2 retries)").arg(why).arg(m_retries));
    const qint64 wasteLimit =
        m_settings.maxWastedBytes > 0 ? m_settings.maxWastedBytes : std::max(kMinWasteAllowance, m_size);
    if (m_wasted > wasteLimit)
        return fail(QStringLiteral("%1 (gave up: %2 bytes received were thrown away, more than the %3 allowed)")
                        .arg(why)
                        .arg(m_wasted)
                        .arg(wasteLimit));
    const int delay = std::min(kMaxBackoffMs, m_settings.retryBaseMs << std::min(m_retries, 16));
    ++m_retries;
    qCWarning(lcDownload).noquote()
        << why << QStringLiteral("- retry %1 of %2 in %3 ms").arg(m_retries).arg(m_settings.maxRetries).arg(delay);
    m_state = State::Waiting;
    m_retryTimer.start(delay);
}

void FileDownload::finishStreaming() {
    m_state = State::Verifying;
    m_part.close();
    m_hasher.result(this, [this](const QString& hex, const QString& error) {
        if (m_state != State::Verifying) return;
        if (!error.isEmpty()) return fail(error);
        if (!m_expected.hex.isEmpty() && hex != m_expected.hex) {
            QFile::remove(partPath());
            QFile::remove(metaPath());
            m_hashedUpTo = -1;
            return fail(QStringLiteral("%1: %2 mismatch: expected %3, got %4; the corrupt download was removed")
                            .arg(m_url.toString(), m_expected.name(), m_expected.hex, hex));
        }
        m_actualHash = hex;
        checkFromDisk();
    });
}

// The second check, from the bytes on disk, right before the rename.
void FileDownload::checkFromDisk() {
    auto* watcher = new QFutureWatcher<QString>(this);
    connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher] {
        watcher->deleteLater();
        const QString hex = watcher->result();
        if (hex.startsWith(QStringLiteral("error:"))) return fail(hex.mid(6));
        if (hex != m_actualHash) {
            QFile::remove(partPath());
            QFile::remove(metaPath());
            m_hashedUpTo = -1;
            return fail(QStringLiteral("%1: %2 of the file on disk (%3) differs from the streamed one (%4); removed")
                            .arg(partPath(), m_expected.name(), hex, m_actualHash));
        }
        std::error_code ec;
        std::filesystem::rename(partPath().toStdString(), m_finalPath.toStdString(), ec);
        if (ec)
            return fail(QStringLiteral("%1: cannot rename to %2: %3")
                            .arg(partPath(), m_finalPath, QString::fromStdString(ec.message())));
        QFile::remove(metaPath());
        m_state = State::Done;
        Q_EMIT progress(m_size, m_size);
        Q_EMIT finished(true);
    });
    watcher->setFuture(hashFileAsync(partPath(), m_expected.kind));
}

void FileDownload::fail(const QString& error) {
    m_retryTimer.stop();
    m_part.close();
    m_error = error;
    m_state = State::Failed;
    qCDebug(lcDownload).noquote() << error;
    Q_EMIT finished(false);
}

}  // namespace ember::models
