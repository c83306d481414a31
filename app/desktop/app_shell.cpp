// SPDX-License-Identifier: MIT
#include "app_shell.h"

#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QIcon>
#include <QLoggingCategory>
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QStandardPaths>
#include <QUrl>

#include "chat/chat_controller.h"
#include "chat/image_cache.h"
#include "engine/engine_controller.h"
#include "manager/model_manager.h"
#include "server/local_server.h"
#include "settings/app_settings.h"
#include "storage/conversation_store.h"
#include "ui/stall_monitor.h"

namespace ember::desktop {

Q_LOGGING_CATEGORY(lcApp, "ember.desktop.app")

void configureApplication() {
    QGuiApplication::setApplicationName(QStringLiteral("Ember"));
    QGuiApplication::setOrganizationName(QStringLiteral("Ember"));
    QGuiApplication::setApplicationDisplayName(QStringLiteral("Ember"));
    QGuiApplication::setDesktopFileName(QStringLiteral("org.ember.Ember"));
    QGuiApplication::setWindowIcon(QIcon(QStringLiteral(":/ember/icons/ember.svg")));
    if (qEnvironmentVariableIsEmpty("QT_QUICK_CONTROLS_STYLE")) QQuickStyle::setStyle(QStringLiteral("Fusion"));
}

AppOptions parseArguments(const QCoreApplication& app) {
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Ember: chat with local language models."));
    parser.addHelpOption();
    const QCommandLineOption model(QStringLiteral("model"), QStringLiteral("Load this GGUF model at start."),
                                   QStringLiteral("file"));
    const QCommandLineOption dataDir(QStringLiteral("data-dir"),
                                     QStringLiteral("Folder for conversations and settings."), QStringLiteral("dir"));
    const QCommandLineOption modelsDir(QStringLiteral("models-dir"), QStringLiteral("The model library's folder."),
                                       QStringLiteral("dir"));
    const QCommandLineOption scheme(QStringLiteral("color-scheme"), QStringLiteral("system, light or dark."),
                                    QStringLiteral("scheme"));
    const QCommandLineOption noModel(QStringLiteral("no-model"), QStringLiteral("Start without loading a model."));
    const QCommandLineOption offline(QStringLiteral("offline"), QStringLiteral("Do not use the network."));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QStringLiteral("Save the window as a PNG once the model has loaded, then quit (exit 1 if it failed)."),
        QStringLiteral("file"));
    parser.addOptions({model, dataDir, modelsDir, scheme, noModel, offline, screenshot});
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("files"),
                                 QStringLiteral("GGUF models to add to the library (where they lie) and load. A "
                                                "running Ember for the same data folder gets them instead."),
                                 QStringLiteral("[model.gguf...]"));
    parser.process(app);
    AppOptions o;
    o.modelPath = parser.value(model);
    for (const QString& file : parser.positionalArguments()) {
        const QUrl url(file);  // a file manager may pass a file: URL
        o.openFiles.append(QFileInfo(url.isLocalFile() ? url.toLocalFile() : file).absoluteFilePath());
    }
    o.screenshot = parser.value(screenshot);
    o.dataDir = parser.value(dataDir);
    o.modelsDir = parser.value(modelsDir);
    o.colorScheme = parser.value(scheme);
    o.noModel = parser.isSet(noModel);
    o.offline = parser.isSet(offline);
    return o;
}

QString dataFolder(const AppOptions& options) {
    if (!options.dataDir.isEmpty()) return options.dataDir;
    const QString env = qEnvironmentVariable("EMBER_DATA_DIR");
    return env.isEmpty() ? QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) : env;
}

AppShell::AppShell(AppOptions options, QObject* parent) : QObject(parent), m_options(std::move(options)) {
    m_options.dataDir = dataFolder(m_options);
    QDir().mkpath(m_options.dataDir);
    const QDir data(m_options.dataDir);

    m_stalls = std::make_unique<StallMonitor>();
    m_settings = std::make_unique<AppSettings>(data.filePath(QStringLiteral("settings.ini")));
    m_images = std::make_unique<ImageCache>();
    m_store = std::make_unique<ConversationStore>();
    m_engine = std::make_unique<EngineController>(m_stalls.get());
    m_chat = std::make_unique<ChatController>(m_engine.get(), m_store.get(), m_settings.get(), m_images.get());
    m_models = std::make_unique<ModelManager>(m_options.modelsDir, m_options.offline);
    m_localServer = std::make_unique<LocalServer>(m_engine.get(), data.filePath(QStringLiteral("settings.ini")));

    connect(m_engine.get(), &EngineController::modelLoaded, this, &AppShell::onModelLoaded);
    connect(m_settings.get(), &AppSettings::colorSchemeChanged, this,
            [this] { applyColorScheme(m_settings->colorScheme()); });
    connect(m_chat.get(), &ChatController::ggufDropped, this, &AppShell::openModelFile);
    applyColorScheme(m_options.colorScheme.isEmpty() ? m_settings->colorScheme() : m_options.colorScheme);
    m_store->open(data.filePath(QStringLiteral("conversations.sqlite")));
}

AppShell::~AppShell() = default;

bool AppShell::start() {
    m_qml = std::make_unique<QQmlApplicationEngine>();
    m_qml->addImportPath(QStringLiteral("qrc:/"));
    m_qml->addImageProvider(QStringLiteral("ember"), new ImageCacheProvider(m_images.get()));
    m_qml->setInitialProperties({
        {QStringLiteral("chat"), QVariant::fromValue(m_chat.get())},
        {QStringLiteral("engine"), QVariant::fromValue(m_engine.get())},
        {QStringLiteral("settings"), QVariant::fromValue(m_settings.get())},
        {QStringLiteral("models"), QVariant::fromValue(m_models.get())},
    });
    m_qml->load(QUrl(QStringLiteral("qrc:/Ember/Main.qml")));
    if (m_qml->rootObjects().isEmpty() || !window()) {
        qCCritical(lcApp) << "the window could not be created";
        return false;
    }

    QString model = m_options.modelPath;
    if (model.isEmpty() && QFileInfo::exists(m_settings->lastModelPath())) model = m_settings->lastModelPath();
    if (!m_options.openFiles.isEmpty()) {
        for (const QString& file : m_options.openFiles) openModelFile(file);  // the last one stays loaded
    } else if (!model.isEmpty() && !m_options.noModel) {
        m_engine->loadModel(model, m_settings->threads(), m_settings->contextLength(), m_settings->backend());
    }
    m_models->refreshLibrary();
    return true;
}

void AppShell::openModelFile(const QString& pathOrUrl) {
    const QUrl url(pathOrUrl);
    const QString path = url.isLocalFile() ? url.toLocalFile() : pathOrUrl;
    // The engine reads the file while the library hashes it: a large model is not kept waiting for its checksum.
    m_engine->loadModel(path, m_settings->threads(), m_settings->contextLength(), m_settings->backend());
    m_models->importModel(path);
    if (QQuickWindow* w = window())  // the chat page, where the model is loading (Main.qml)
        QMetaObject::invokeMethod(w, "showPage", Q_ARG(QVariant, QStringLiteral("chat")));
}

QQuickWindow* AppShell::window() const {
    if (!m_qml || m_qml->rootObjects().isEmpty()) return nullptr;
    return qobject_cast<QQuickWindow*>(m_qml->rootObjects().first());
}

void AppShell::onModelLoaded() {
    const QString path = m_engine->modelPath();
    m_settings->setLastModelPath(path);
    m_settings->applyModelPreset(path);  // the values saved for this model, when there are some
}

void AppShell::applyColorScheme(const QString& scheme) {
    if (scheme == QLatin1String("dark"))
        QGuiApplication::setPalette(darkPalette());
    else if (scheme == QLatin1String("light"))
        QGuiApplication::setPalette(lightPalette());
    else
        QGuiApplication::setPalette(QPalette());  // no role set: every role follows the platform theme, live
}

QPalette AppShell::darkPalette() {
    QPalette p;
    const QColor window(0x26, 0x28, 0x2c), base(0x1d, 0x1f, 0x22), text(0xe6, 0xe7, 0xe9);
    const QColor button(0x33, 0x36, 0x3b), highlight(0x3d, 0x7b, 0xe0), muted(0x8b, 0x90, 0x97);
    for (const auto group : {QPalette::Active, QPalette::Inactive}) {
        p.setColor(group, QPalette::Window, window);
        p.setColor(group, QPalette::WindowText, text);
        p.setColor(group, QPalette::Base, base);
        p.setColor(group, QPalette::AlternateBase, QColor(0x2c, 0x2f, 0x33));
        p.setColor(group, QPalette::Text, text);
        p.setColor(group, QPalette::Button, button);
        p.setColor(group, QPalette::ButtonText, text);
        p.setColor(group, QPalette::BrightText, Qt::white);
        p.setColor(group, QPalette::Highlight, highlight);
        p.setColor(group, QPalette::HighlightedText, Qt::white);
        p.setColor(group, QPalette::PlaceholderText, muted);
        p.setColor(group, QPalette::ToolTipBase, button);
        p.setColor(group, QPalette::ToolTipText, text);
        p.setColor(group, QPalette::Link, QColor(0x6c, 0xa8, 0xff));
        p.setColor(group, QPalette::Light, QColor(0x45, 0x48, 0x4e));
        p.setColor(group, QPalette::Midlight, QColor(0x3a, 0x3d, 0x42));
        p.setColor(group, QPalette::Mid, QColor(0x2f, 0x32, 0x36));
        p.setColor(group, QPalette::Dark, QColor(0x18, 0x19, 0x1c));
        p.setColor(group, QPalette::Shadow, QColor(0x0c, 0x0c, 0x0e));
    }
    p.setColor(QPalette::Disabled, QPalette::WindowText, muted);
    p.setColor(QPalette::Disabled, QPalette::Text, muted);
    p.setColor(QPalette::Disabled, QPalette::ButtonText, muted);
    p.setColor(QPalette::Disabled, QPalette::Window, window);
    p.setColor(QPalette::Disabled, QPalette::Base, base);
    p.setColor(QPalette::Disabled, QPalette::Button, button);
    return p;
}

QPalette AppShell::lightPalette() {
    QPalette p;
    const QColor window(0xf4, 0xf5, 0xf7), base(0xff, 0xff, 0xff), text(0x1f, 0x23, 0x28);
    const QColor button(0xe9, 0xeb, 0xee), highlight(0x2f, 0x6f, 0xd6), muted(0x6a, 0x73, 0x7d);
    for (const auto group : {QPalette::Active, QPalette::Inactive}) {
        p.setColor(group, QPalette::Window, window);
        p.setColor(group, QPalette::WindowText, text);
        p.setColor(group, QPalette::Base, base);
        p.setColor(group, QPalette::AlternateBase, QColor(0xf0, 0xf2, 0xf5));
        p.setColor(group, QPalette::Text, text);
        p.setColor(group, QPalette::Button, button);
        p.setColor(group, QPalette::ButtonText, text);
        p.setColor(group, QPalette::BrightText, Qt::white);
        p.setColor(group, QPalette::Highlight, highlight);
        p.setColor(group, QPalette::HighlightedText, Qt::white);
        p.setColor(group, QPalette::PlaceholderText, muted);
        p.setColor(group, QPalette::ToolTipBase, QColor(0xff, 0xff, 0xe8));
        p.setColor(group, QPalette::ToolTipText, text);
        p.setColor(group, QPalette::Link, highlight);
        p.setColor(group, QPalette::Light, Qt::white);
        p.setColor(group, QPalette::Midlight, QColor(0xe2, 0xe5, 0xe9));
        p.setColor(group, QPalette::Mid, QColor(0xc9, 0xcd, 0xd3));
        p.setColor(group, QPalette::Dark, QColor(0xa0, 0xa6, 0xad));
        p.setColor(group, QPalette::Shadow, QColor(0x70, 0x75, 0x7b));
    }
    p.setColor(QPalette::Disabled, QPalette::WindowText, muted);
    p.setColor(QPalette::Disabled, QPalette::Text, muted);
    p.setColor(QPalette::Disabled, QPalette::ButtonText, muted);
    return p;
}

}  // namespace ember::desktop
