// SPDX-License-Identifier: MIT
// One Ember per data folder: a second `ember FILE.gguf` (what a double-click in a file manager runs) hands its files
// to the running Ember through a local socket and exits, instead of opening a second window over the same
// conversations. The first Ember listens; a QLockFile keeps two starting at once from both becoming the first.
#pragma once

#include <QLocalServer>
#include <QObject>
#include <QString>
#include <QStringList>

namespace ember::desktop {

class SingleInstance : public QObject {
    Q_OBJECT
public:
    explicit SingleInstance(const QString& dataDir, QObject* parent = nullptr);

    // Sends `files` (absolute paths; may be empty: the running window comes to the front) to a running Ember and
    // returns true once it has acknowledged them. Otherwise listens, so that later starts reach this process, and
    // returns false: this process is the one to show a window.
    bool handOff(const QStringList& files);

    // The socket's name for a data folder: a full path in $XDG_RUNTIME_DIR when there is one, else a name that
    // QLocalServer places in the temporary folder.
    static QString serverName(const QString& dataDir);

Q_SIGNALS:
    // Another `ember` start asked this one to open these files (possibly none).
    void filesReceived(const QStringList& files);

private:
    void onConnection();

    QString m_name;
    QLocalServer m_server;
};

}  // namespace ember::desktop
