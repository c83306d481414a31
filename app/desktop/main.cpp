// SPDX-License-Identifier: MIT
// Ember's desktop app: everything lives in the ember_desktop library (a QML module); this only starts it.
#include <QGuiApplication>
#include <QtQml/qqmlextensionplugin.h>
#include <cstring>

#include "app_shell.h"

Q_IMPORT_QML_PLUGIN(EmberPlugin)

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            QCoreApplication app(argc, argv);  // usage needs no display
            ember::desktop::parseArguments(app);  // prints it and exits
        }
    QGuiApplication app(argc, argv);
    ember::desktop::configureApplication();
    ember::desktop::AppShell shell(ember::desktop::parseArguments(app));
    if (!shell.start()) return 1;
    return QGuiApplication::exec();
}
