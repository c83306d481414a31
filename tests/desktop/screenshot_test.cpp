// SPDX-License-Identifier: MIT
// Screenshots of the real window on the offscreen platform, written to <build>/screenshots/*.png for people to
// look at: a conversation with code and thinking (folded and unfolded) in light and dark, an image attached in the
// composer and sent, the settings, and the model pages (first run, catalog, downloads, library). The test checks
// that each picture was taken and is not blank; what is in it is checked by the end-to-end test.
#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "app_harness.h"
#include "chat/chat_controller.h"
#include "inference/engine_controller.h"
#include "manager/download_list_model.h"
#include "manager/library_list_model.h"
#include "manager/model_manager.h"
#include "settings/app_settings.h"
#include "storage/storage_worker.h"

namespace ember::desktop {
namespace {

using namespace test;

// Saves the window and checks the picture has real content (more than a handful of colours), and that every
// control on it has an accessible name.
void shoot(QQuickWindow* window, const QString& name) {
    const QStringList unnamed = controlsWithoutAccessibleName(window);
    EXPECT_TRUE(unnamed.isEmpty()) << name.toStdString() << ": controls without an accessible name: "
                                   << unnamed.join(", ").toStdString();
    ASSERT_TRUE(saveScreenshot(window, name)) << name.toStdString();
    const QImage image(QDir(screenshotDir()).filePath(name + QStringLiteral(".png")));
    ASSERT_FALSE(image.isNull());
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 7)
        for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
    EXPECT_GT(colours.size(), 20) << name.toStdString() << " looks blank";
}

void converse(AppShell* app) {
    ChatController* chat = app->chat();
    QSignalSpy finished(chat, &ChatController::replyFinished);
    ASSERT_TRUE(waitUntil([&] { return app->engine()->state() == EngineController::Ready && chat->storageReady(); }));
    ASSERT_TRUE(chat->send(QStringLiteral("Write a Python function that adds two numbers.")));
    ASSERT_TRUE(waitUntil([&] { return finished.count() == 1; }));
}

TEST(DesktopScreenshots, ChatLightAndDark) {
    QTemporaryDir data;
    QString conversation;
    {
        std::unique_ptr<AppShell> app = startApp(data.path(), fixture(QStringLiteral("scripted.gguf")), "light");
        ASSERT_TRUE(app);
        QQuickWindow* window = app->window();
        converse(app.get());
        conversation = app->chat()->conversationId();
        shoot(window, QStringLiteral("chat-light-thinking-folded"));
        QQuickItem* header = findItem(window, QStringLiteral("thinkingHeader"));
        ASSERT_TRUE(header);
        click(header);
        ASSERT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("thinkingText")) != nullptr; }));
        shoot(window, QStringLiteral("chat-light-thinking-expanded"));

        const QString png = QDir(data.path()).filePath(QStringLiteral("sunset.png"));
        ASSERT_TRUE(writeTestImage(png, QColor(0xe0, 0x70, 0x30), 160));
        app->chat()->attachFiles({QUrl::fromLocalFile(png)});
        ASSERT_TRUE(waitUntil([&] { return app->chat()->attachments()->count() == 1; }));
        typeText(findItem(window, QStringLiteral("composerInput")), QStringLiteral("What is in this picture?"));
        shoot(window, QStringLiteral("composer-image-attached"));
        QSignalSpy finished(app->chat(), &ChatController::replyFinished);
        pressKey(window, Qt::Key_Return);
        ASSERT_TRUE(waitUntil([&] { return finished.count() == 1; }));
        shoot(window, QStringLiteral("chat-light-image-sent"));

        pressKey(window, Qt::Key_Comma, Qt::ControlModifier);
        ASSERT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("contextLengthSpin")) != nullptr; }));
        pumpEvents(400);  // the dialog's opening transition
        shoot(window, QStringLiteral("settings-dialog"));
        click(findItem(window, QStringLiteral("closeSettingsButton")));
        EXPECT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("contextLengthSpin")) == nullptr; }))
            << "Close closes the settings";
    }
    {
        std::unique_ptr<AppShell> app = startApp(data.path(), fixture(QStringLiteral("scripted.gguf")), "dark");
        ASSERT_TRUE(app);
        ChatController* chat = app->chat();
        ASSERT_TRUE(waitUntil([&] { return chat->conversations()->rowOf(conversation) >= 0; }));
        chat->openConversation(conversation);
        ASSERT_TRUE(waitUntil([&] { return chat->conversationId() == conversation; }));
        ASSERT_TRUE(waitUntil([&] { return app->engine()->state() == EngineController::Ready; }));
        shoot(app->window(), QStringLiteral("chat-dark-image"));
        chat->messages()->blocks(chat->messages()->idAt(3))->setExpanded(0, true);
        pumpEvents(300);
        shoot(app->window(), QStringLiteral("chat-dark-thinking-expanded"));
    }
}

TEST(DesktopScreenshots, ModelPages) {
    QTemporaryDir data;
    // A library with two models in it.
    const QDir models(QDir(data.path()).filePath(QStringLiteral("models")));
    QDir().mkpath(models.path());
    ASSERT_TRUE(QFile::copy(fixture(QStringLiteral("scripted.gguf")), models.filePath(QStringLiteral("scripted.gguf"))));
    ASSERT_TRUE(QFile::copy(fixture(QStringLiteral("scripted-plain.gguf")),
                            models.filePath(QStringLiteral("scripted-plain.gguf"))));
    std::unique_ptr<AppShell> app = startApp(data.path(), {}, "light");
    ASSERT_TRUE(app);
    QQuickWindow* window = app->window();
    ASSERT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("welcomePage")) != nullptr; }))
        << "the first run without a model shows the welcome page";
    shoot(window, QStringLiteral("page-welcome"));
    EXPECT_TRUE(findItem(window, QStringLiteral("starterButton"))) << "the first run offers the small starter";
    EXPECT_TRUE(findItem(window, QStringLiteral("openModelFileButton"))) << "and a model file of one's own";
    QQuickItem* browse = findItem(window, QStringLiteral("browseCatalogButton"));
    ASSERT_TRUE(browse) << "and the catalog";
    click(browse);
    ASSERT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("catalogPage")) != nullptr; }));
    shoot(window, QStringLiteral("page-catalog"));
    click(findItem(window, QStringLiteral("downloadsNav")));
    ASSERT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("downloadsPage")) != nullptr; }));
    shoot(window, QStringLiteral("page-downloads-empty"));
    click(findItem(window, QStringLiteral("libraryNav")));
    ASSERT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("libraryPage")) != nullptr; }));
    ASSERT_TRUE(waitUntil([&] { return findItems(window, QStringLiteral("loadModelButton")).size() == 2; }))
        << "the library lists the two models";
    shoot(window, QStringLiteral("page-library"));
    // A .gguf dropped onto the window is imported into the library, not attached.
    app->chat()->attachFiles({QUrl::fromLocalFile(fixture(QStringLiteral("scripted-endless.gguf")))});
    EXPECT_TRUE(waitUntil([&] { return app->models()->library()->rowCount() == 3; }))
        << "the dropped model joins the library";
    EXPECT_EQ(app->chat()->attachments()->count(), 0);
    // With no model loaded, the imported model is loaded and the chat page shows.
    ASSERT_TRUE(waitUntil([&] { return app->engine()->state() == EngineController::Ready; }));
    EXPECT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("composerInput")) != nullptr; }));
    EXPECT_TRUE(app->engine()->modelPath().endsWith(QStringLiteral("scripted-endless.gguf")));
}

// The downloads page with a download in progress, from the model-manager tests' local hub served slowly.
TEST(DesktopScreenshots, DownloadsPage) {
    QTemporaryDir data;
    QProcess hub;
    hub.start(QStringLiteral(EMBER_TEST_VENV "/bin/python"),
              {QStringLiteral(EMBER_TEST_SOURCE_DIR "/serve_hub.py"),
               QStringLiteral(EMBER_TEST_FIXTURE_DIR "/models/hub"), QStringLiteral("4000")});
    ASSERT_TRUE(hub.waitForStarted());
    ASSERT_TRUE(waitUntil([&] { return hub.canReadLine() || hub.state() == QProcess::NotRunning; }));
    const QByteArray url = hub.readLine().trimmed();
    ASSERT_TRUE(url.startsWith("http://")) << url.toStdString();
    qputenv("EMBER_HUB_URL", url);
    qputenv("EMBER_CATALOG", EMBER_TEST_FIXTURE_DIR "/models/catalog.json");
    std::unique_ptr<AppShell> app = startApp(data.path(), {}, "light", false);
    qunsetenv("EMBER_HUB_URL");
    qunsetenv("EMBER_CATALOG");
    ASSERT_TRUE(app);
    QQuickWindow* window = app->window();
    click(findItem(window, QStringLiteral("catalogNav")));
    ASSERT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("catalogPage")) != nullptr; }));
    shoot(window, QStringLiteral("page-catalog-test-hub"));
    app->models()->download(QStringLiteral("tiny-dflash"));
    click(findItem(window, QStringLiteral("downloadsNav")));
    ASSERT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("downloadsPage")) != nullptr; }));
    ASSERT_TRUE(waitUntil([&] {
        const QModelIndex row = app->models()->downloads()->index(0);
        return row.isValid() && row.data(DownloadListModel::ReceivedRole).toLongLong() > 8000;
    })) << "no download progress";
    shoot(window, QStringLiteral("page-downloads"));
    app->models()->cancelDownload(QStringLiteral("tiny-dflash"));
    hub.closeWriteChannel();
    if (!hub.waitForFinished(10000)) hub.kill();
}

// Issue 20: a damaged history is moved aside and the dialog names where; a read-only one shows the banner.
void writeSmallHistory(const QString& path, int chats) {
    StorageWorker w;
    w.open(path);
    for (int c = 0; c < chats; ++c)
        w.saveConversation({QStringLiteral("c%1").arg(c), QStringLiteral("Saved chat %1").arg(c), c, c, true, {}});
    w.close();
}

TEST(DesktopScreenshots, DamagedAndReadOnlyHistory) {
    {
        QTemporaryDir data;
        const QString path = QDir(data.path()).filePath(QStringLiteral("conversations.sqlite"));
        writeSmallHistory(path, 3);
        QFile f(path);
        ASSERT_TRUE(f.open(QIODevice::ReadWrite));
        f.write(QByteArray(100, '\0'));  // a wiped header
        f.close();
        std::unique_ptr<AppShell> app = startApp(data.path(), fixture(QStringLiteral("scripted.gguf")), "light");
        ASSERT_TRUE(app);
        QQuickWindow* window = app->window();
        // The dialog is a popup, not an item: its path field shows that it is open.
        ASSERT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("recoveredHistoryPath")) != nullptr; }));
        QQuickItem* shownPath = findItem(window, QStringLiteral("recoveredHistoryPath"));
        ASSERT_TRUE(shownPath);
        EXPECT_TRUE(shownPath->property("text").toString().startsWith(path + QStringLiteral(".corrupt-")));
        EXPECT_TRUE(QFileInfo::exists(shownPath->property("text").toString()));
        pumpEvents(300);
        shoot(window, QStringLiteral("history-recovered-dialog"));
        click(findItem(window, QStringLiteral("closeHistoryRecoveredButton")));
        EXPECT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("recoveredHistoryPath")) == nullptr; }));
        EXPECT_TRUE(waitUntil([&] { return app->chat()->conversations()->count() == 3; }))
            << "the chats were recovered";
        EXPECT_TRUE(app->chat()->storageReady());
    }
    {
        QTemporaryDir data;
        const QString path = QDir(data.path()).filePath(QStringLiteral("conversations.sqlite"));
        writeSmallHistory(path, 2);
        QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::ReadGroup | QFileDevice::ReadOther);
        std::unique_ptr<AppShell> app = startApp(data.path(), fixture(QStringLiteral("scripted.gguf")), "light");
        ASSERT_TRUE(app);
        QQuickWindow* window = app->window();
        ASSERT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("historyReadOnlyBanner")) != nullptr; }));
        EXPECT_TRUE(findItem(window, QStringLiteral("historyReadOnlyBanner"))
                        ->property("text")
                        .toString()
                        .startsWith(QStringLiteral("History is read-only: new chats will not be saved")));
        EXPECT_TRUE(waitUntil([&] { return app->chat()->conversations()->count() == 2; })) << "the history is shown";
        pumpEvents(300);
        shoot(window, QStringLiteral("history-read-only-banner"));
        QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    }
}

}  // namespace
}  // namespace ember::desktop
