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
#include "inference/engine_controller.h"
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

namespace {

// A theme's colours as 0xRRGGBB. Active and Inactive get every role; Disabled greys the text roles and, where
// keepDisabledSurfaces is set, keeps the window, base and button colours.
struct ThemeColors {
    QRgb window, base, text, button, highlight, muted;
    QRgb alternateBase, toolTipBase, link, light, midlight, mid, dark, shadow;
    bool keepDisabledSurfaces;
};

//                                    window    base      text      button    highlight muted
constexpr ThemeColors kDarkTheme = {0x26282c, 0x1d1f22, 0xe6e7e9, 0x33363b, 0x3d7be0, 0x8b9097,
                                    // alt base tooltip  link      light     midlight  mid       dark      shadow
                                    0x2c2f33, 0x33363b, 0x6ca8ff, 0x45484e, 0x3a3d42, 0x2f3236, 0x18191c, 0x0c0c0e,
                                    true};
constexpr ThemeColors kLightTheme = {0xf4f5f7, 0xffffff, 0x1f2328, 0xe9ebee, 0x2f6fd6, 0x6a737d,
                                     0xf0f2f5, 0xffffe8, 0x2f6fd6, 0xffffff, 0xe2e5e9, 0xc9cdd3, 0xa0a6ad, 0x70757b,
                                     false};

QPalette themePalette(const ThemeColors& c) {
    QPalette p;
    const QColor text(c.text), muted(c.muted);
    for (const auto group : {QPalette::Active, QPalette::Inactive}) {
        p.setColor(group, QPalette::Window, QColor(c.window));
        p.setColor(group, QPalette::WindowText, text);
        p.setColor(group, QPalette::Base, QColor(c.base));
        p.setColor(group, QPalette::AlternateBase, QColor(c.alternateBase));
        p.setColor(group, QPalette::Text, text);
        p.setColor(group, QPalette::Button, QColor(c.button));
        p.setColor(group, QPalette::ButtonText, text);
        p.setColor(group, QPalette::BrightText, Qt::white);
        p.setColor(group, QPalette::Highlight, QColor(c.highlight));
        p.setColor(group, QPalette::HighlightedText, Qt::white);
        p.setColor(group, QPalette::PlaceholderText, muted);
        p.setColor(group, QPalette::ToolTipBase, QColor(c.toolTipBase));
        p.setColor(group, QPalette::ToolTipText, text);
        p.setColor(group, QPalette::Link, QColor(c.link));
        p.setColor(group, QPalette::Light, QColor(c.light));
        p.setColor(group, QPalette::Midlight, QColor(c.midlight));
        p.setColor(group, QPalette::Mid, QColor(c.mid));
        p.setColor(group, QPalette::Dark, QColor(c.dark));
        p.setColor(group, QPalette::Shadow, QColor(c.shadow));
    }
    p.setColor(QPalette::Disabled, QPalette::WindowText, muted);
    p.setColor(QPalette::Disabled, QPalette::Text, muted);
    p.setColor(QPalette::Disabled, QPalette::ButtonText, muted);
    if (c.keepDisabledSurfaces) {
        p.setColor(QPalette::Disabled, QPalette::Window, QColor(c.window));
        p.setColor(QPalette::Disabled, QPalette::Base, QColor(c.base));
        p.setColor(QPalette::Disabled, QPalette::Button, QColor(c.button));
    }
    return p;
}

}  // namespace

QPalette AppShell::darkPalette() { return themePalette(kDarkTheme); }

QPalette AppShell::lightPalette() { return themePalette(kLightTheme); }

}  // namespace ember::desktop
