// SPDX-License-Identifier: MIT
// How Ember starts and is reached from outside: a second `ember FILE.gguf` (the real program) hands the file to the
// running window through the local socket, which records it in the library where it lies and loads it; a .gguf
// dropped onto the window is opened the same way; the About dialog shows the application version.
#include <gtest/gtest.h>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QQuickWindow>
#include <QTemporaryDir>

#include "app_harness.h"
#include "chat/chat_controller.h"
#include "inference/engine_controller.h"
#include "manager/library_list_model.h"
#include "manager/model_manager.h"
#include "single_instance.h"

namespace ember::desktop {
namespace {

using namespace test;

// A private runtime folder, so that the socket of a developer's own Ember is never reached.
class LaunchTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(runtime.isValid());
        QFile::setPermissions(runtime.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        qputenv("XDG_RUNTIME_DIR", QFile::encodeName(runtime.path()));
    }
    void TearDown() override { qunsetenv("XDG_RUNTIME_DIR"); }

    QTemporaryDir runtime;
    QTemporaryDir data;
};

TEST_F(LaunchTest, SecondStartHandsItsFileToTheRunningWindow) {
    std::unique_ptr<AppShell> app = startApp(data.path(), {}, "light");
    ASSERT_TRUE(app);
    SingleInstance instance(data.path());
    ASSERT_FALSE(instance.handOff({})) << "nobody is listening yet: this process becomes the running Ember";
    // Wired as main.cpp wires it.
    QObject::connect(&instance, &SingleInstance::filesReceived, app.get(), [&](const QStringList& files) {
        for (const QString& file : files) app->openModelFile(file);
    });

    // Handed over by a relative path, from another working folder.
    QTemporaryDir downloads;
    const QString model = QDir(downloads.path()).filePath(QStringLiteral("scripted.gguf"));
    ASSERT_TRUE(QFile::copy(fixture(QStringLiteral("scripted.gguf")), model));
    QProcess second;
    second.setWorkingDirectory(downloads.path());
    second.setProcessChannelMode(QProcess::MergedChannels);
    second.start(QStringLiteral(EMBER_TEST_BIN_DIR "/ember"),
                 {QStringLiteral("--data-dir"), data.path(), QStringLiteral("scripted.gguf")});
    ASSERT_TRUE(waitUntil([&] { return second.state() == QProcess::NotRunning; }, 30000))
        << "the second ember kept running: " << second.readAll().toStdString();
    EXPECT_EQ(second.exitStatus(), QProcess::NormalExit);
    EXPECT_EQ(second.exitCode(), 0) << second.readAll().toStdString();

    ASSERT_TRUE(waitUntil([&] { return app->engine()->state() == EngineController::Ready; }));
    EXPECT_EQ(app->engine()->modelPath(), model);
    EXPECT_TRUE(waitUntil([&] { return findItem(app->window(), QStringLiteral("composerInput")) != nullptr; }))
        << "the window shows the chat with the model, not the welcome page";
    ASSERT_TRUE(waitUntil([&] { return app->models()->library()->rowCount() == 1; })) << "imported";
    const QModelIndex row = app->models()->library()->index(0);
    EXPECT_EQ(row.data(LibraryListModel::PathRole).toString(), model) << "recorded where it lies, not copied";
    EXPECT_TRUE(QDir(data.path()).entryList({QStringLiteral("*.gguf")}, QDir::Files).isEmpty());
    EXPECT_TRUE(QDir(QDir(data.path()).filePath(QStringLiteral("models")))
                    .entryList({QStringLiteral("*.gguf")}, QDir::Files)
                    .isEmpty());
}

TEST_F(LaunchTest, DroppedModelIsOpenedEvenWithAModelLoaded) {
    std::unique_ptr<AppShell> app = startApp(data.path(), fixture(QStringLiteral("scripted.gguf")), "light");
    ASSERT_TRUE(app);
    ASSERT_TRUE(waitUntil([&] { return app->engine()->state() == EngineController::Ready; }));
    app->chat()->attachFiles({QUrl::fromLocalFile(fixture(QStringLiteral("scripted-plain.gguf")))});
    ASSERT_TRUE(waitUntil([&] {
        return app->engine()->state() == EngineController::Ready &&
               app->engine()->modelPath().endsWith(QStringLiteral("scripted-plain.gguf"));
    }));
    EXPECT_TRUE(waitUntil([&] { return app->models()->library()->rowCount() >= 1; })) << "and joins the library";
}

TEST_F(LaunchTest, AboutDialogShowsTheVersion) {
    QCoreApplication::setApplicationVersion(QStringLiteral("9.8.7+test"));
    std::unique_ptr<AppShell> app = startApp(data.path(), {}, "light");
    ASSERT_TRUE(app);
    QQuickWindow* window = app->window();
    pressKey(window, Qt::Key_Comma, Qt::ControlModifier);
    ASSERT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("aboutButton")) != nullptr; }));
    pumpEvents(400);  // the settings dialog's opening transition
    click(findItem(window, QStringLiteral("aboutButton")));
    ASSERT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("aboutVersionLabel")) != nullptr; }));
    pumpEvents(400);
    EXPECT_EQ(findItem(window, QStringLiteral("aboutVersionLabel"))->property("text").toString(),
              QStringLiteral("Version 9.8.7+test"));
    saveScreenshot(window, QStringLiteral("about-dialog"));
    QCoreApplication::setApplicationVersion({});
}

}  // namespace
}  // namespace ember::desktop
