// SPDX-License-Identifier: MIT
// The application put together: settings, storage, the engine, the chat, the model manager, the QML window.
// main.cpp only creates the QGuiApplication and an AppShell; the end-to-end tests create the same AppShell, so
// they drive exactly what users run.
#pragma once

#include <QObject>
#include <QPalette>
#include <QString>
#include <QStringList>
#include <memory>

class QQmlApplicationEngine;
class QQuickWindow;
class QCoreApplication;

namespace ember::desktop {

class AppSettings;
class ChatController;
class ConversationStore;
class EngineController;
class ImageCache;
class LocalServer;
class ModelManager;
class StallMonitor;

struct AppOptions {
    QString dataDir;      // conversations.sqlite and settings.ini; default: the platform's app data folder
    QString modelPath;    // load this model at start (else the last one used)
    QStringList openFiles;  // model files to open at start (AppShell::openModelFile), absolute
    QString modelsDir;    // the model library folder; default: $EMBER_MODELS_DIR or <data>/ember/models
    QString colorScheme;  // overrides the setting for this run: system, light or dark
    bool noModel = false;   // start without loading any model
    bool offline = false;   // no network: the catalog is shown, downloads are refused
    QString screenshot;     // save the window here once the model has loaded, then quit (window_snapshot.h)
};

// Parses the command line (--model, --data-dir, --models-dir, --color-scheme, --no-model, --offline, --screenshot,
// model files or file: URLs to open). Exits with usage on --help and with the version on --version.
AppOptions parseArguments(const QCoreApplication& app);
// The folder for conversations and settings: --data-dir, else $EMBER_DATA_DIR, else the platform's app data folder.
QString dataFolder(const AppOptions& options);
// Application name, organization, style (Fusion: it follows the palette) and icon. Call before AppShell.
void configureApplication();

class AppShell : public QObject {
    Q_OBJECT
public:
    explicit AppShell(AppOptions options, QObject* parent = nullptr);
    ~AppShell() override;

    // Loads the window. Returns false (with the QML errors logged) when it cannot.
    bool start();

    QQuickWindow* window() const;
    QQmlApplicationEngine* qmlEngine() const { return m_qml.get(); }
    AppSettings* settings() const { return m_settings.get(); }
    ConversationStore* store() const { return m_store.get(); }
    EngineController* engine() const { return m_engine.get(); }
    ChatController* chat() const { return m_chat.get(); }
    ModelManager* models() const { return m_models.get(); }
    StallMonitor* stalls() const { return m_stalls.get(); }
    ImageCache* images() const { return m_images.get(); }
    LocalServer* localServer() const { return m_localServer.get(); }
    const AppOptions& options() const { return m_options; }

    // A model file opened from outside (the command line, another `ember` start, a drop onto the window): recorded
    // in the library where it lies (no copy; companions beside it paired) and loaded.
    void openModelFile(const QString& pathOrUrl);

    void applyColorScheme(const QString& scheme);
    static QPalette darkPalette();
    static QPalette lightPalette();

private:
    void onModelLoaded();

    AppOptions m_options;
    std::unique_ptr<StallMonitor> m_stalls;
    std::unique_ptr<AppSettings> m_settings;
    std::unique_ptr<ImageCache> m_images;
    std::unique_ptr<ConversationStore> m_store;
    std::unique_ptr<EngineController> m_engine;
    std::unique_ptr<ChatController> m_chat;
    std::unique_ptr<ModelManager> m_models;
    std::unique_ptr<LocalServer> m_localServer;  // before the engine is destroyed: it posts to the engine thread
    std::unique_ptr<QQmlApplicationEngine> m_qml;  // last: destroyed first, before what the QML refers to
};

}  // namespace ember::desktop
