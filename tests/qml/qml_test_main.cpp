// SPDX-License-Identifier: MIT
// Qt Quick Test runner for the QML components (tests/qml/tst_*.qml) with the Ember module linked in.
#include <QQmlEngine>
#include <QtQml/qqmlextensionplugin.h>
#include <QtQuickTest>

Q_IMPORT_QML_PLUGIN(EmberPlugin)

class EmberQmlTestSetup : public QObject {
    Q_OBJECT
public Q_SLOTS:
    void qmlEngineAvailable(QQmlEngine* engine) { engine->addImportPath(QStringLiteral("qrc:/")); }
};

QUICK_TEST_MAIN_WITH_SETUP(ember_qml, EmberQmlTestSetup)

#include "qml_test_main.moc"
