// SPDX-License-Identifier: MIT
// Ember's desktop app: everything lives in the ember_desktop library (a QML module); this only starts it, or hands
// the files to open to an Ember already running for the same data folder.
#include <QtQml/qqmlextensionplugin.h>
#include <QGuiApplication>
#include <QQuickWindow>
#include <cstring>

#include "app_shell.h"
#include "ember_version.h"
#include "single_instance.h"
#include "window_snapshot.h"

Q_IMPORT_QML_PLUGIN(EmberPlugin)

int main(int argc, char** argv) {
    QCoreApplication::setApplicationVersion(QStringLiteral(EMBER_VERSION));
    for (int i = 1; i < argc; ++i)
        for (const char* flag : {"--help", "-h", "--help-all", "--version", "-v"})
            if (std::strcmp(argv[i], flag) == 0) {
                QCoreApplication app(argc, argv);     // usage and version need no display
                ember::desktop::parseArguments(app);  // prints them and exits
            }
    QGuiApplication app(argc, argv);
    ember::desktop::configureApplication();
    const ember::desktop::AppOptions options = ember::desktop::parseArguments(app);
    // A screenshot run is a check of its own: it never hands off to, or waits for, another window.
    ember::desktop::SingleInstance instance(ember::desktop::dataFolder(options));
    if (options.screenshot.isEmpty() && instance.handOff(options.openFiles)) return 0;
    ember::desktop::AppShell shell(options);
    if (!shell.start()) return 1;
    QObject::connect(&instance, &ember::desktop::SingleInstance::filesReceived, &shell,
                     [&shell](const QStringList& files) {
                         for (const QString& file : files) shell.openModelFile(file);
                         shell.window()->show();
                         shell.window()->raise();
                         shell.window()->requestActivate();
                     });
    if (!options.screenshot.isEmpty()) ember::desktop::snapshotWhenSettled(&shell, options.screenshot);
    return QGuiApplication::exec();
}
