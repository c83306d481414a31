// SPDX-License-Identifier: MIT
// LocalServer and AppEngineHost: the server library bound to the app's engine thread.
#include "local_server.h"

#include <QClipboard>
#include <QDateTime>
#include <QFutureWatcher>
#include <QGuiApplication>
#include <QLoggingCategory>
#include <QQmlEngine>
#include <QSettings>
#include <QtConcurrent/QtConcurrentRun>
#include <mutex>

#include "inference/engine_controller.h"
#include "engine_host.h"
#include "openai_server.h"
#include "ui/assign_if_changed.h"

namespace ember::desktop {

Q_LOGGING_CATEGORY(lcServer, "ember.desktop.server")

namespace {
LocalServer* g_instance = nullptr;
}

// The server's EngineHost: jobs go to the engine thread's queue; what is served is a snapshot the GUI thread
// updates when the model changes (read from HTTP threads).
class AppEngineHost : public server::EngineHost {
public:
    explicit AppEngineHost(EngineController* engine) : m_engine(engine) {}
    std::optional<server::ServedModel> served_model() const override {
        std::lock_guard lock(m_mutex);
        return m_served;
    }
    void post(server::EngineJob job) override { m_engine->postServerJob(std::move(job)); }
    void setServed(std::optional<server::ServedModel> served) {
        std::lock_guard lock(m_mutex);
        m_served = std::move(served);
    }

private:
    EngineController* m_engine;
    mutable std::mutex m_mutex;
    std::optional<server::ServedModel> m_served;
};

LocalServer::LocalServer(EngineController* engine, const QString& settingsFile, QObject* parent)
    : QObject(parent), m_engine(engine), m_settingsFile(settingsFile), m_host(std::make_unique<AppEngineHost>(engine)) {
    if (!g_instance) g_instance = this;
    QSettings s(m_settingsFile, QSettings::IniFormat);
    m_port = s.value(QStringLiteral("localServer/port"), 8080).toInt();
    m_apiKey = s.value(QStringLiteral("localServer/apiKey")).toString();
    connect(engine, &EngineController::modelChanged, this, &LocalServer::updateServedModel);
    connect(engine, &EngineController::stateChanged, this, &LocalServer::updateServedModel);
    updateServedModel();
}

LocalServer::~LocalServer() {
    if (m_server) m_server->stop();
    m_stopping.waitForFinished();
    if (g_instance == this) g_instance = nullptr;
}

LocalServer* LocalServer::create(QQmlEngine*, QJSEngine*) {
    if (g_instance) QQmlEngine::setObjectOwnership(g_instance, QQmlEngine::CppOwnership);
    return g_instance;
}

void LocalServer::updateServedModel() {
    if (m_engine->state() != EngineController::Ready) {
        m_host->setServed(std::nullopt);
        return;
    }
    server::ServedModel m;
    m.id = (m_engine->modelName().isEmpty() ? QStringLiteral("ember") : m_engine->modelName()).toStdString();
    m.n_ctx = m_engine->contextLength();
    m.created = QDateTime::currentSecsSinceEpoch();
    m.has_vision = m_engine->canSeeImages();
    m_host->setServed(m);
}

void LocalServer::setPort(int port) {
    if (port == m_port || port < 1 || port > 65535) return;
    m_port = port;
    QSettings(m_settingsFile, QSettings::IniFormat).setValue(QStringLiteral("localServer/port"), port);
    Q_EMIT portChanged();
}

void LocalServer::setApiKey(const QString& key) {
    if (!assignIfChanged(m_apiKey, key)) return;
    QSettings(m_settingsFile, QSettings::IniFormat).setValue(QStringLiteral("localServer/apiKey"), key);
    Q_EMIT apiKeyChanged();
    Q_EMIT runningChanged();  // the example shows the key
}

QString LocalServer::address() const {
    return m_server ? QString::fromStdString(m_server->base_url()) : QString();
}

QString LocalServer::example() const {
    if (!m_server) return {};
    QString auth = m_apiKey.isEmpty() ? QString() : QStringLiteral(" -H 'Authorization: Bearer %1'").arg(m_apiKey);
    return QStringLiteral(
               "curl %1/chat/completions -H 'Content-Type: application/json'%2 -d "
               "'{\"messages\": [{\"role\": \"user\", \"content\": \"Hello!\"}]}'")
        .arg(address(), auth);
}

void LocalServer::setError(const QString& error) {
    if (!assignIfChanged(m_error, error)) return;
    Q_EMIT errorChanged();
}

void LocalServer::setEnabled(bool on) {
    if (on == running()) return;
    if (on) {
        if (stopping()) m_stopping.waitForFinished();  // the old server still holds the port: at most a token
        server::ServerOptions options;
        options.port = m_port;
        options.api_key = m_apiKey.toStdString();
        auto server = std::make_unique<server::OpenAiServer>(*m_host, options);
        try {
            server->start();
        } catch (const std::exception& e) {
            qCWarning(lcServer) << "local server:" << e.what();
            setError(QString::fromStdString(e.what()));
            Q_EMIT runningChanged();
            return;
        }
        m_server = std::move(server);
        setError({});
        qCInfo(lcServer) << "serving on" << address();
    } else {
        // Stopping waits for the requests in flight to notice: off the GUI thread.
        std::shared_ptr<server::OpenAiServer> old(m_server.release());
        m_stopping = QtConcurrent::run([old] { old->stop(); });
        auto* watcher = new QFutureWatcher<void>(this);
        connect(watcher, &QFutureWatcher<void>::finished, this, [this, watcher] {
            watcher->deleteLater();
            Q_EMIT runningChanged();
        });
        watcher->setFuture(m_stopping);
    }
    Q_EMIT runningChanged();
}

void LocalServer::copyText(const QString& text) {
    QGuiApplication::clipboard()->setText(text);
}

}  // namespace ember::desktop
