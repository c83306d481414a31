// SPDX-License-Identifier: MIT
// The hand-off protocol, one message per connection: "ember-open\n", one absolute path per line, an empty line; the
// running Ember answers "ok\n" once it has taken the files.
#include "single_instance.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QLocalSocket>
#include <QLockFile>
#include <QLoggingCategory>
#include <memory>

namespace ember::desktop {

Q_LOGGING_CATEGORY(lcInstance, "ember.desktop.instance")

namespace {

constexpr int kTimeoutMs = 5000;
const QByteArray kHello = QByteArrayLiteral("ember-open\n");
const QByteArray kAck = QByteArrayLiteral("ok\n");

bool sendFiles(const QString& name, const QStringList& files) {
    QLocalSocket socket;
    socket.connectToServer(name);
    if (!socket.waitForConnected(kTimeoutMs)) return false;
    QByteArray message = kHello;
    for (const QString& f : files) message += QFile::encodeName(f) + '\n';
    message += '\n';
    socket.write(message);
    if (!socket.waitForBytesWritten(kTimeoutMs)) return false;
    QByteArray answer;
    while (!answer.contains('\n') && socket.waitForReadyRead(kTimeoutMs)) answer += socket.readAll();
    return answer == kAck;
}

}  // namespace

SingleInstance::SingleInstance(const QString& dataDir, QObject* parent) : QObject(parent), m_name(serverName(dataDir)) {
    m_server.setSocketOptions(QLocalServer::UserAccessOption);
    connect(&m_server, &QLocalServer::newConnection, this, &SingleInstance::onConnection);
}

QString SingleInstance::serverName(const QString& dataDir) {
    const QByteArray folder = QFile::encodeName(QDir(dataDir).absolutePath());
    const QString name =
        QStringLiteral("ember-") +
        QString::fromLatin1(QCryptographicHash::hash(folder, QCryptographicHash::Sha256).toHex().left(16));
    const QString runtime = qEnvironmentVariable("XDG_RUNTIME_DIR");
    if (!runtime.isEmpty() && QFileInfo(runtime).isDir() && QFileInfo(runtime).isWritable())
        return QDir(runtime).filePath(name);
    return name;
}

bool SingleInstance::handOff(const QStringList& files) {
    const QString lockPath =
        (QDir::isAbsolutePath(m_name) ? m_name : QDir::temp().filePath(m_name)) + QStringLiteral(".lock");
    QLockFile lock(lockPath);
    if (!lock.tryLock(2 * kTimeoutMs)) qCWarning(lcInstance) << lockPath << ": not locked; going on without it";
    if (sendFiles(m_name, files)) return true;
    // Nobody answered: a socket left behind by an Ember that crashed is in the way, so take its place.
    QLocalServer::removeServer(m_name);
    if (!m_server.listen(m_name))
        qCWarning(lcInstance) << m_name << ": cannot listen (" << m_server.errorString()
                              << "); a second ember will open a second window";
    return false;
}

void SingleInstance::onConnection() {
    while (QLocalSocket* socket = m_server.nextPendingConnection()) {
        connect(socket, &QLocalSocket::disconnected, socket, &QObject::deleteLater);
        auto buffer = std::make_shared<QByteArray>();
        connect(socket, &QLocalSocket::readyRead, this, [this, socket, buffer] {
            *buffer += socket->readAll();
            if (buffer->size() > 1 << 20) {  // a message of paths is small: this is not an Ember talking
                socket->abort();
                return;
            }
            if (!buffer->startsWith(kHello) || !buffer->endsWith("\n\n")) {
                if (buffer->size() >= kHello.size() && !buffer->startsWith(kHello)) socket->abort();
                return;
            }
            QStringList files;
            for (const QByteArray& line : buffer->mid(kHello.size()).split('\n'))
                if (!line.isEmpty()) files.append(QFile::decodeName(line));
            socket->write(kAck);
            socket->flush();
            Q_EMIT filesReceived(files);
        });
    }
}

}  // namespace ember::desktop
