// SPDX-License-Identifier: MIT
// main() for the desktop tests: GoogleTest inside a QGuiApplication on the offscreen platform (no display needed),
// with the Ember QML module linked in. Listing the tests (ctest's discovery) needs no application.
#include <gtest/gtest.h>

#include <QGuiApplication>
#include <QtQml/qqmlextensionplugin.h>

#include "app_shell.h"

Q_IMPORT_QML_PLUGIN(EmberPlugin)

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    if (::testing::GTEST_FLAG(list_tests)) return RUN_ALL_TESTS();
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    // Tests must not read or write the user's settings or conversations.
    qputenv("XDG_CONFIG_HOME", QByteArray(::testing::TempDir().c_str()) + "ember-test-config");
    QGuiApplication app(argc, argv);
    ember::desktop::configureApplication();
    return RUN_ALL_TESTS();
}
