// SPDX-License-Identifier: MIT
// Hashing off the caller's thread: a streaming hasher that takes downloaded chunks in order on a worker thread, and
// a one-shot hash of a whole file (for the check before the final rename, for "Verify" and for imports).
//
// Two algorithms, because the hub gives two kinds of hash: SHA-256 for LFS files, and the git blob SHA-1 (of
// "blob <size>\0" + content) for small files kept in git, such as chat_template.jinja.
#pragma once

#include <QByteArray>
#include <QCryptographicHash>
#include <QFuture>
#include <QObject>
#include <QString>
#include <QThread>
#include <functional>
#include <memory>

namespace ember::models {

enum class HashKind { Sha256, GitBlobSha1 };

struct ExpectedHash {
    HashKind kind = HashKind::Sha256;
    QString hex;  // lower-case; empty when the source gave no hash
    QString name() const { return kind == HashKind::Sha256 ? QStringLiteral("sha256") : QStringLiteral("git oid"); }
};

// Hashes a file from disk. `size` is the content size used for the git blob header. Returns "" and sets `error`
// when the file cannot be read. Blocking: call it on a worker (hashFileAsync).
QString hashFile(const QString& path, HashKind kind, QString* error = nullptr);
QFuture<QString> hashFileAsync(const QString& path, HashKind kind);

// Takes chunks in order and hashes them on its own thread. Results come back through a callback invoked on the
// application's (main) thread, unless `context` is gone by then. Destroying the hasher stops its thread after
// the queued chunks.
class StreamHasher : public QObject {
    Q_OBJECT
public:
    explicit StreamHasher(QObject* parent = nullptr);
    ~StreamHasher() override;

    // Starts a new hash; `totalSize` is needed for the git blob header. Then feeds the first `prefixBytes` bytes
    // of `existingPath` (a partial download being resumed), read on the worker.
    void reset(HashKind kind, qint64 totalSize, const QString& existingPath = {}, qint64 prefixBytes = 0);
    void addData(const QByteArray& chunk);
    // Calls `done(hex, error)` on the main thread once every chunk queued so far is hashed.
    void result(QObject* context, std::function<void(QString hex, QString error)> done);

private:
    struct State;
    QThread m_thread;
    QObject* m_worker;  // lives on m_thread
    std::shared_ptr<State> m_state;
};

}  // namespace ember::models
