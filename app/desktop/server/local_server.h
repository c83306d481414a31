// SPDX-License-Identifier: MIT
// The desktop app's "Local server": the same OpenAI-compatible server as `ember-cli serve`, on the model loaded in
// the app. Its generations run on the engine thread, queued with the chat window's turns (one engine, first come
// first served), in a session of their own so that the chat and the server keep their own prompt caches.
//
// The GUI thread never waits on it: starting binds a socket (immediate), stopping runs on a worker thread (it
// cancels the requests in flight and waits for the HTTP threads). A QML singleton; the port and key persist in the
// app's settings file.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QFuture>
#include <QObject>
#include <QString>
#include <memory>

class QQmlEngine;
class QJSEngine;

namespace ember::server {
class OpenAiServer;
}

namespace ember::desktop {

class EngineController;
class AppEngineHost;

class LocalServer : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
    Q_PROPERTY(bool running READ running NOTIFY runningChanged)
    Q_PROPERTY(bool stopping READ stopping NOTIFY runningChanged)
    Q_PROPERTY(int port READ port WRITE setPort NOTIFY portChanged)
    Q_PROPERTY(QString apiKey READ apiKey WRITE setApiKey NOTIFY apiKeyChanged)
    Q_PROPERTY(QString address READ address NOTIFY runningChanged)  // the base URL clients use (…/v1)
    Q_PROPERTY(QString example READ example NOTIFY runningChanged)  // a curl command that asks the model
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)

public:
    LocalServer(EngineController* engine, const QString& settingsFile, QObject* parent = nullptr);
    ~LocalServer() override;  // stops the server and waits for it (bounded: about one token)

    // The app's instance, for QML (set by the first LocalServer made).
    static LocalServer* create(QQmlEngine*, QJSEngine*);

    bool running() const { return m_server != nullptr; }
    bool stopping() const { return m_stopping.isRunning(); }
    int port() const { return m_port; }
    void setPort(int port);
    QString apiKey() const { return m_apiKey; }
    void setApiKey(const QString& key);
    QString address() const;
    QString example() const;
    QString error() const { return m_error; }

    // Turns the server on or off. Port and key changes apply the next time it starts.
    Q_INVOKABLE void setEnabled(bool on);
    Q_INVOKABLE void copyText(const QString& text);

Q_SIGNALS:
    void runningChanged();
    void portChanged();
    void apiKeyChanged();
    void errorChanged();

private:
    void updateServedModel();
    void setError(const QString& error);

    EngineController* m_engine;
    QString m_settingsFile;
    int m_port = 8080;
    QString m_apiKey;
    QString m_error;
    std::unique_ptr<AppEngineHost> m_host;
    std::unique_ptr<server::OpenAiServer> m_server;
    QFuture<void> m_stopping;
};

}  // namespace ember::desktop
