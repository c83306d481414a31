// SPDX-License-Identifier: MIT
// Helpers for the desktop tests: fixture paths, waiting on the event loop, finding QML items by objectName,
// clicking and typing into the real window, screenshots, and starting the real application (AppShell) on a
// private data folder. Waits are generous and never a measurement: a slow machine makes a test slower, not red.
#pragma once

#include <QColor>
#include <QJsonObject>
#include <QQuickItem>
#include <QString>
#include <functional>
#include <memory>
#include <ostream>

#include "app_shell.h"

class QQuickWindow;

// GoogleTest prints Qt strings as text.
QT_BEGIN_NAMESPACE
inline void PrintTo(const QString& s, std::ostream* os) {
    *os << '"' << s.toStdString() << '"';
}
inline void PrintTo(const QStringList& list, std::ostream* os) {
    *os << '[' << list.join(QStringLiteral(", ")).toStdString() << ']';
}
QT_END_NAMESPACE

namespace ember::desktop::test {

inline constexpr int kWaitMs = 120000;

QString fixtureDir();                 // <fixtures>/desktop (made by make_desktop_fixtures.py)
QString fixture(const QString& name);  // a file in it
QJsonObject expected();               // expected.json: the scripted models' texts and token counts
QString smallModelPath();             // SmolLM2-135M-Instruct from the venv, or empty when it is not installed
QString screenshotDir();              // <build>/screenshots

// Runs the event loop until `done` or the timeout; returns done().
bool waitUntil(const std::function<bool()>& done, int timeoutMs = kWaitMs);
void pumpEvents(int ms);

// The first visible item named `name` under the window (popups included), or null.
QQuickItem* findItem(QQuickWindow* window, const QString& name);
QList<QQuickItem*> findItems(QQuickWindow* window, const QString& name);
// A real mouse click at the item's centre.
void click(QQuickItem* item);
// Types into the item (given focus first); "\n" in text is typed as Enter.
void typeText(QQuickItem* item, const QString& text);
void pressKey(QQuickWindow* window, int key, Qt::KeyboardModifiers modifiers = Qt::NoModifier);
// Visible controls (buttons, text fields and areas, combo and spin boxes, sliders) whose accessible name is empty,
// described by class and objectName.
QStringList controlsWithoutAccessibleName(QQuickWindow* window);
bool saveScreenshot(QQuickWindow* window, const QString& name);  // <screenshotDir>/<name>.png
// A small PNG (a coloured square with a frame) written to `path`.
bool writeTestImage(const QString& path, const QColor& color, int size = 96);

// Starts the real application on `dataDir`, loading `model` (empty: none), and waits until the window exists.
std::unique_ptr<AppShell> startApp(const QString& dataDir, const QString& model, const QString& scheme = "light",
                                   bool offline = true);

}  // namespace ember::desktop::test
