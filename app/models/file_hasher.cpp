// SPDX-License-Identifier: MIT
#include "file_hasher.h"

#include <QCoreApplication>
#include <QFile>
#include <QMetaObject>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

namespace ember::models {

namespace {

constexpr qint64 kReadChunk = 4 << 20;

QCryptographicHash::Algorithm algorithm(HashKind kind) {
    return kind == HashKind::Sha256 ? QCryptographicHash::Sha256 : QCryptographicHash::Sha1;
}

QByteArray gitBlobHeader(qint64 size) {
    return "blob " + QByteArray::number(size) + '\0';
}

}  // namespace

QString hashFile(const QString& path, HashKind kind, QString* error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error) *error = QStringLiteral("%1: cannot read: %2").arg(path, file.errorString());
        return {};
    }
    QCryptographicHash hash(algorithm(kind));
    if (kind == HashKind::GitBlobSha1) hash.addData(gitBlobHeader(file.size()));
    QByteArray buffer;
    while (!file.atEnd()) {
        buffer = file.read(kReadChunk);
        if (buffer.isEmpty() && file.error() != QFileDevice::NoError) {
            if (error) *error = QStringLiteral("%1: read failed: %2").arg(path, file.errorString());
            return {};
        }
        hash.addData(buffer);
    }
    return QString::fromLatin1(hash.result().toHex());
}

QFuture<QString> hashFileAsync(const QString& path, HashKind kind) {
    return QtConcurrent::run([path, kind] {
        QString error;
        const QString hex = hashFile(path, kind, &error);
        return hex.isEmpty() ? QStringLiteral("error:") + error : hex;
    });
}

// Touched only on the worker thread.
struct StreamHasher::State {
    std::unique_ptr<QCryptographicHash> hash;
    QString error;
};

StreamHasher::StreamHasher(QObject* parent)
    : QObject(parent), m_worker(new QObject), m_state(std::make_shared<State>()) {
    m_thread.setObjectName(QStringLiteral("ember-hash"));
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    m_thread.start();
}

StreamHasher::~StreamHasher() {
    m_thread.quit();
    m_thread.wait();
}

void StreamHasher::reset(HashKind kind, qint64 totalSize, const QString& existingPath, qint64 prefixBytes) {
    QMetaObject::invokeMethod(
        m_worker,
        [state = m_state, kind, totalSize, existingPath, prefixBytes] {
            state->hash = std::make_unique<QCryptographicHash>(algorithm(kind));
            state->error.clear();
            if (kind == HashKind::GitBlobSha1) state->hash->addData(gitBlobHeader(totalSize));
            if (prefixBytes <= 0) return;
            QFile file(existingPath);
            if (!file.open(QIODevice::ReadOnly)) {
                state->error = QStringLiteral("%1: cannot read: %2").arg(existingPath, file.errorString());
                return;
            }
            qint64 left = prefixBytes;
            while (left > 0) {
                const QByteArray chunk = file.read(std::min(left, kReadChunk));
                if (chunk.isEmpty()) {
                    state->error = QStringLiteral("%1: shorter than %2 bytes").arg(existingPath).arg(prefixBytes);
                    return;
                }
                state->hash->addData(chunk);
                left -= chunk.size();
            }
        },
        Qt::QueuedConnection);
}

void StreamHasher::addData(const QByteArray& chunk) {
    QMetaObject::invokeMethod(
        m_worker,
        [state = m_state, chunk] {
            if (state->hash) state->hash->addData(chunk);
        },
        Qt::QueuedConnection);
}

void StreamHasher::result(QObject* context, std::function<void(QString, QString)> done) {
    QPointer<QObject> guard(context);
    QMetaObject::invokeMethod(
        m_worker,
        [state = m_state, guard, done = std::move(done)] {
            const QString hex = state->hash ? QString::fromLatin1(state->hash->result().toHex()) : QString();
            const QString error = state->error;
            // Posted to the application object, which outlives every context; the guard is read on its thread.
            QMetaObject::invokeMethod(
                QCoreApplication::instance(),
                [guard, done, hex, error] {
                    if (guard) done(hex, error);
                },
                Qt::QueuedConnection);
        },
        Qt::QueuedConnection);
}

}  // namespace ember::models
