// SPDX-License-Identifier: MIT
// End to end: the real application (AppShell, the QML window on the offscreen platform) with the scripted fixture
// models, driven through its controls: type and send, receive the streamed answer with its thinking block, switch
// thinking off, attach an image, stop an endless answer, regenerate, then close the app, start it again on the same
// data folder and find the conversation with everything in it.
#include <gtest/gtest.h>

#include <QClipboard>
#include <QDir>
#include <QImage>
#include <QGuiApplication>
#include <QPalette>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "app_harness.h"
#include "chat/chat_controller.h"
#include "inference/engine_controller.h"
#include "settings/app_settings.h"

namespace ember::desktop {
namespace {

using namespace test;

struct Reply {
    QString id;
    QString state;
    qint64 tokensAfterStop = -1;
};

// Replies in the order they finished; next() waits for the first one not taken yet (which may have finished
// already: a fast machine can end an answer before the test looks).
struct Replies {
    explicit Replies(ChatController* chat) : spy(chat, &ChatController::replyFinished) {}
    Reply next() {
        EXPECT_TRUE(waitUntil([&] { return spy.count() > taken; })) << "no reply finished";
        if (spy.count() <= taken) return {};
        const QList<QVariant> args = spy.at(taken++);
        return {args[0].toString(), args[1].toString(), args[2].toLongLong()};
    }
    QSignalSpy spy;
    qsizetype taken = 0;
};

QStringList blockKinds(MessageBlockModel* blocks) {
    QStringList kinds;
    for (int i = 0; blocks && i < blocks->count(); ++i) kinds.append(blocks->kindAt(i));
    return kinds;
}

TEST(DesktopEndToEnd, ChatThinkImageStopRegenerateRestart) {
    QTemporaryDir data;
    ASSERT_TRUE(data.isValid());
    const QJsonObject want = expected();
    ASSERT_FALSE(want.isEmpty()) << "desktop fixtures missing in " << fixtureDir().toStdString();
    const QString answer = want[QStringLiteral("answer")].toString();
    const QString reasoning = want[QStringLiteral("reasoning")].toString();
    QString conversationId;
    QString imageMessageId;
    QString stoppedId;

    {
        std::unique_ptr<AppShell> app = startApp(data.path(), fixture(QStringLiteral("scripted.gguf")));
        ASSERT_TRUE(app);
        QQuickWindow* window = app->window();
        ChatController* chat = app->chat();
        EngineController* engine = app->engine();
        ASSERT_TRUE(waitUntil([&] { return engine->state() == EngineController::Ready; })) << engine->lastError().toStdString();
        ASSERT_TRUE(waitUntil([&] { return chat->storageReady(); }));
        EXPECT_TRUE(engine->supportsThinking());
        Replies replies(chat);
        QSignalSpy streamed(engine, &EngineController::streamed);

        // 1. Type a question; Shift+Enter makes a new line, Enter sends.
        QQuickItem* input = findItem(window, QStringLiteral("composerInput"));
        ASSERT_TRUE(input);
        typeText(input, QStringLiteral("Write"));
        pressKey(window, Qt::Key_Return, Qt::ShiftModifier);
        typeText(input, QStringLiteral("add\n"));
        Reply first = replies.next();
        EXPECT_EQ(first.state, QStringLiteral("complete"));
        // A short answer may come in one batch when the GUI thread is busy for all of it; step 4 checks that a
        // long answer streams in many.
        EXPECT_GE(streamed.count(), 1) << "the answer did not come through the stream";
        ASSERT_EQ(chat->messages()->count(), 2);
        EXPECT_EQ(chat->messageText(0), QStringLiteral("Write\nadd"));
        EXPECT_EQ(chat->messageText(1), answer);
        EXPECT_TRUE(input->property("text").toString().isEmpty());
        MessageBlockModel* blocks = chat->messages()->blocks(first.id);
        EXPECT_EQ(blockKinds(blocks), QStringList({"thinking", "text", "code", "text"}));
        EXPECT_EQ(blocks->textAt(0), reasoning);
        EXPECT_FALSE(blocks->thinkingExpanded()) << "the thinking block folds itself when the answer starts";
        EXPECT_EQ(blocks->textAt(2), QStringLiteral("def add(a, b):\n    return a + b"));
        QQuickItem* header = findItem(window, QStringLiteral("thinkingHeader"));
        ASSERT_TRUE(header);
        EXPECT_FALSE(findItem(window, QStringLiteral("thinkingText")));
        click(header);
        EXPECT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("thinkingText")) != nullptr; }));
        conversationId = chat->conversationId();
        const QStringList unnamed = controlsWithoutAccessibleName(window);
        EXPECT_TRUE(unnamed.isEmpty()) << "controls without an accessible name: " << unnamed.join(", ").toStdString();
        EXPECT_FALSE(conversationId.isEmpty());


        // 2. Thinking off for this conversation: the answer comes without reasoning.
        QQuickItem* toggle = findItem(window, QStringLiteral("thinkingToggle"));
        ASSERT_TRUE(toggle);
        EXPECT_TRUE(toggle->property("checked").toBool());
        click(toggle);
        EXPECT_TRUE(waitUntil([&] { return !chat->thinkingEnabled(); }));
        typeText(input, QStringLiteral("again\n"));
        Reply second = replies.next();
        EXPECT_EQ(second.state, QStringLiteral("complete"));
        EXPECT_EQ(chat->messageText(3), answer);
        EXPECT_EQ(blockKinds(chat->messages()->blocks(second.id)), QStringList({"text", "code", "text"}));
        // The template writes past reasoning back (preserve_thinking), so the second prompt starts with everything
        // the first turn computed, and the session reuses it instead of prefilling it again.
        const QVariantMap stats1 = chat->messages()->index(1).data(MessageListModel::StatsRole).toMap();
        const QVariantMap stats2 = chat->messages()->index(3).data(MessageListModel::StatsRole).toMap();
        // (The scripted answer's tokens are not what BPE makes of its text, so the reuse ends after the reasoning;
        // without the reasoning written back it would end before "<think>", inside the first prompt.)
        EXPECT_GE(stats2[QStringLiteral("reusedTokens")].toLongLong(),
                  stats1[QStringLiteral("promptTokens")].toLongLong() + want[QStringLiteral("reasoning_tokens")].toInt())
            << "prompt cache not reused across turns";
        EXPECT_EQ(stats1[QStringLiteral("generatedTokens")].toLongLong(),
                  want[QStringLiteral("thinking_turn_tokens")].toInt());

        // 3. An image, attached as a drop or the attach dialog would: a thumbnail, and the plain notice.
        const QString png = QDir(data.path()).filePath(QStringLiteral("dot.png"));
        ASSERT_TRUE(writeTestImage(png, QColor(0xd0, 0x60, 0x30)));
        chat->attachFiles({QUrl::fromLocalFile(png)});
        ASSERT_TRUE(waitUntil([&] { return chat->attachments()->count() == 1; }));
        // A second one pasted into the composer (Ctrl+V with an image in the clipboard).
        QImage pasted(64, 48, QImage::Format_RGB32);
        pasted.fill(QColor(0x30, 0x90, 0xd0));
        QGuiApplication::clipboard()->setImage(pasted);
        input->forceActiveFocus();
        pressKey(window, Qt::Key_V, Qt::ControlModifier);
        ASSERT_TRUE(waitUntil([&] { return chat->attachments()->count() == 2; })) << "the pasted image was not attached";
        chat->removeAttachment(1);  // and removed again
        ASSERT_EQ(chat->attachments()->count(), 1);
        EXPECT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("visionNotice")) != nullptr; }));
        EXPECT_TRUE(findItem(window, QStringLiteral("removeAttachmentButton")));
        typeText(input, QStringLiteral("what is this\n"));
        Reply third = replies.next();
        EXPECT_EQ(third.state, QStringLiteral("complete"));
        EXPECT_EQ(chat->attachments()->count(), 0);
        imageMessageId = chat->messages()->idAt(4);
        EXPECT_EQ(blockKinds(chat->messages()->blocks(imageMessageId)), QStringList({"image", "text"}));

        // 4. Stop an answer that never ends, with the stop button; it stops within one token.
        engine->loadModel(fixture(QStringLiteral("scripted-endless.gguf")));
        ASSERT_TRUE(waitUntil([&] { return engine->state() == EngineController::Ready; }));
        const qsizetype batchesBefore = streamed.count();
        typeText(input, QStringLiteral("go on forever\n"));
        ASSERT_TRUE(waitUntil([&] { return chat->messages()->count() == 8 && chat->messageText(7).size() > answer.size() + 20; }));
        EXPECT_TRUE(waitUntil([&] { return streamed.count() > batchesBefore + 2; }))
            << "the answer in flight is not shown as it streams";
        QQuickItem* stop = findItem(window, QStringLiteral("stopButton"));
        ASSERT_TRUE(stop);
        click(stop);
        Reply stopped = replies.next();
        EXPECT_EQ(stopped.state, QStringLiteral("stopped"));
        EXPECT_GE(stopped.tokensAfterStop, 0);
        EXPECT_LE(stopped.tokensAfterStop, 1) << "the engine went on after the stop request";
        EXPECT_TRUE(chat->messageText(7).startsWith(answer)) << chat->messageText(7).toStdString();
        stoppedId = stopped.id;

        // 5. Regenerate (Ctrl+R): a second answer beside the stopped one, which stays reachable.
        app->settings()->setMaxTokens(30);
        pressKey(window, Qt::Key_R, Qt::ControlModifier);
        Reply regenerated = replies.next();
        EXPECT_EQ(regenerated.state, QStringLiteral("complete"));
        EXPECT_NE(regenerated.id, stopped.id);
        const QModelIndex last = chat->messages()->index(7);
        EXPECT_EQ(last.data(MessageListModel::SiblingCountRole).toInt(), 2);
        EXPECT_EQ(last.data(MessageListModel::SiblingIndexRole).toInt(), 2);
        chat->switchBranch(7, -1);
        EXPECT_EQ(chat->messages()->idAt(7), stopped.id);

        // Continue the stopped answer: the new text is appended to it.
        const QString before = chat->messageText(7);
        ASSERT_TRUE(chat->continueLast());
        Reply continued = replies.next();
        EXPECT_EQ(continued.id, stopped.id);
        EXPECT_GT(chat->messageText(7).size(), before.size());
        EXPECT_TRUE(chat->messageText(7).startsWith(before));

        // Edit the first question and resend: a new branch from the start; the old one stays reachable.
        ASSERT_TRUE(chat->editAndResend(0, QStringLiteral("Edited question")));
        replies.next();
        ASSERT_EQ(chat->messages()->count(), 2);
        EXPECT_EQ(chat->messageText(0), QStringLiteral("Edited question"));
        EXPECT_EQ(chat->messages()->index(0).data(MessageListModel::SiblingCountRole).toInt(), 2);
        chat->switchBranch(0, -1);
        ASSERT_EQ(chat->messages()->count(), 8);
        chat->switchBranch(7, -1);  // the version shown when the app closes: the stopped and continued one
        EXPECT_EQ(chat->messages()->idAt(7), stopped.id);

        // Export to Markdown and JSON.
        const QString md = QDir(data.path()).filePath(QStringLiteral("chat.md"));
        const QString json = QDir(data.path()).filePath(QStringLiteral("chat.json"));
        QSignalSpy exported(chat, &ChatController::exported);
        chat->exportConversation(QUrl::fromLocalFile(md), QStringLiteral("markdown"));
        chat->exportConversation(QUrl::fromLocalFile(json), QStringLiteral("json"));
        ASSERT_TRUE(waitUntil([&] { return exported.count() == 2; }));
        EXPECT_TRUE(exported.at(0).at(1).toString().isEmpty()) << exported.at(0).at(1).toString().toStdString();
        QFile mdFile(md), jsonFile(json);
        ASSERT_TRUE(mdFile.open(QIODevice::ReadOnly) && jsonFile.open(QIODevice::ReadOnly));
        EXPECT_TRUE(QString::fromUtf8(mdFile.readAll()).contains(QStringLiteral("def add(a, b):")));
        const QJsonObject exportedJson = QJsonDocument::fromJson(jsonFile.readAll()).object();
        EXPECT_EQ(exportedJson[QStringLiteral("messages")].toArray().size(), 11) << "every branch, every message";
    }

    // 6. Restart on the same data: the conversation is listed, opens with every message, image and setting.
    {
        std::unique_ptr<AppShell> app = startApp(data.path(), fixture(QStringLiteral("scripted.gguf")));
        ASSERT_TRUE(app);
        ChatController* chat = app->chat();
        ASSERT_TRUE(waitUntil([&] { return chat->conversations()->rowOf(conversationId) >= 0; }));
        chat->openConversation(conversationId);
        ASSERT_TRUE(waitUntil([&] { return chat->conversationId() == conversationId; }));
        ASSERT_EQ(chat->messages()->count(), 8);
        EXPECT_EQ(chat->messageText(0), QStringLiteral("Write\nadd"));
        EXPECT_EQ(chat->messageText(1), answer);
        EXPECT_FALSE(chat->thinkingEnabled()) << "the thinking switch is remembered per conversation";
        EXPECT_EQ(blockKinds(chat->messages()->blocks(imageMessageId)), QStringList({"image", "text"}));
        EXPECT_EQ(chat->messages()->idAt(7), stoppedId) << "the branch shown last is shown again";
        EXPECT_EQ(chat->messages()->index(0).data(MessageListModel::SiblingCountRole).toInt(), 2);
        EXPECT_EQ(chat->messages()->index(7).data(MessageListModel::SiblingCountRole).toInt(), 2);
        EXPECT_EQ(chat->messages()->blocks(chat->messages()->idAt(1))->textAt(0), reasoning);

        // Search by title and by content, rename, delete.
        chat->setSearchText(QStringLiteral("forever"));  // the text of a later question
        EXPECT_TRUE(waitUntil([&] { return chat->conversations()->count() == 1; }));
        chat->setSearchText(QStringLiteral("no such words"));
        EXPECT_TRUE(waitUntil([&] { return chat->conversations()->count() == 0; }));
        chat->setSearchText({});
        EXPECT_TRUE(waitUntil([&] { return chat->conversations()->count() == 1; }));
        chat->renameConversation(conversationId, QStringLiteral("Adding numbers"));
        EXPECT_EQ(chat->title(), QStringLiteral("Adding numbers"));
        chat->setSearchText(QStringLiteral("adding num"));
        EXPECT_TRUE(waitUntil([&] { return chat->conversations()->count() == 1; }));
        chat->setSearchText({});

        // 7. The status bar names the model and the backend; a backend that does not exist fails the load plainly.
        ASSERT_TRUE(waitUntil([&] { return app->engine()->state() == EngineController::Ready; }));
        QQuickItem* backend = findItem(app->window(), QStringLiteral("statusBackend"));
        ASSERT_TRUE(backend);
        EXPECT_TRUE(backend->property("text").toString().startsWith(QStringLiteral("CPU")))
            << backend->property("text").toString().toStdString();
        // The backend "auto" chose, and the status bar says why (here: no GPU, or only a software one).
        QQuickItem* reason = findItem(app->window(), QStringLiteral("statusDeviceReason"));
        ASSERT_TRUE(reason);
        EXPECT_TRUE(reason->property("text").toString().contains(QStringLiteral("GPU")))
            << reason->property("text").toString().toStdString();
        EXPECT_EQ(app->engine()->deviceReason(), reason->property("text").toString());
        // In a narrow window nothing on the line is cut off at the edge: the device reason is what gives way.
        const int wide = app->window()->width();
        app->window()->setWidth(1000);
        pumpEvents(100);
        for (const char* name : {"statusContext", "statusState"}) {
            QQuickItem* item = findItem(app->window(), QString::fromLatin1(name));
            ASSERT_TRUE(item) << name;
            EXPECT_LE(item->mapToScene(QPointF(item->width(), 0)).x(), app->window()->width()) << name;
        }
        app->window()->setWidth(wide);
        EXPECT_EQ(app->settings()->backend(), QStringLiteral("auto"));
        EXPECT_EQ(app->engine()->backendChoices().value(0), QStringLiteral("auto")) << "Automatic comes first";
        EXPECT_TRUE(app->engine()->backendLabels().value(0).startsWith(QStringLiteral("Automatic")));
        EXPECT_TRUE(app->engine()->backendChoices().contains(QStringLiteral("cpu")));
        app->settings()->setBackend(QStringLiteral("nosuchbackend"));
        app->engine()->loadModel(fixture(QStringLiteral("scripted.gguf")), 0, 4096, app->settings()->backend());
        ASSERT_TRUE(waitUntil([&] { return app->engine()->state() == EngineController::Failed; }));
        EXPECT_TRUE(app->engine()->lastError().contains(QStringLiteral("nosuchbackend")))
            << app->engine()->lastError().toStdString();
        QQuickItem* state = findItem(app->window(), QStringLiteral("statusState"));
        ASSERT_TRUE(state);
        EXPECT_TRUE(state->property("text").toString().startsWith(QStringLiteral("Load failed")));
    }
}

// Loading reports progress and can be cancelled from the window's side; whichever wins the race (the cancel, or
// a load that already finished), the state is consistent and the next load works. (The exact moments of a cancel
// are tested on the worker itself: engine_worker_test.cpp.)
TEST(DesktopEndToEnd, LoadProgressAndCancel) {
    QTemporaryDir data;
    std::unique_ptr<AppShell> app = startApp(data.path(), {});
    ASSERT_TRUE(app);
    EngineController* engine = app->engine();
    QSignalSpy failed(engine, &EngineController::loadFailed);
    QSignalSpy progress(engine, &EngineController::loadProgressChanged);
    engine->loadModel(fixture(QStringLiteral("scripted.gguf")));
    EXPECT_EQ(engine->state(), EngineController::Loading);
    engine->cancelLoad();
    ASSERT_TRUE(waitUntil([&] { return engine->state() != EngineController::Loading; }));
    if (failed.count() == 1) {
        EXPECT_TRUE(failed.at(0).at(1).toBool()) << "reported as cancelled";
        EXPECT_EQ(engine->state(), EngineController::NoModel);
        EXPECT_TRUE(engine->lastError().isEmpty());
        EXPECT_TRUE(engine->modelPath().isEmpty());
    } else {
        std::printf("[ note     ] the load finished before the cancel reached it\n");
        EXPECT_EQ(engine->state(), EngineController::Ready);
    }
    const qsizetype failures = failed.count();

    progress.clear();
    engine->loadModel(fixture(QStringLiteral("scripted.gguf")));
    EXPECT_TRUE(waitUntil([&] { return findItem(app->window(), QStringLiteral("loadProgress")) != nullptr ||
                                       engine->state() != EngineController::Loading; }));
    ASSERT_TRUE(waitUntil([&] { return engine->state() == EngineController::Ready; }));
    EXPECT_GE(progress.count(), 2) << "progress is reported while loading";
    EXPECT_DOUBLE_EQ(engine->loadProgress(), 1.0);
    EXPECT_EQ(failed.count(), failures) << "the cancel must not reach the next load";

    // The colour scheme: dark and light are fixed palettes; "system" sets no colour, so the window follows the
    // platform's palette, also when it changes while Ember runs.
    app->applyColorScheme(QStringLiteral("dark"));
    EXPECT_LT(QGuiApplication::palette().color(QPalette::Window).lightnessF(), 0.5);
    app->applyColorScheme(QStringLiteral("light"));
    EXPECT_GT(QGuiApplication::palette().color(QPalette::Window).lightnessF(), 0.5);
    app->applyColorScheme(QStringLiteral("system"));
    EXPECT_EQ(QGuiApplication::palette().resolveMask(), 0u);
}

// A GPU that fails in the middle of a turn (here: injected, EMBER_TEST_DEVICE_FAULT, as a lost device would throw)
// ends that turn with a plain message, unloads the model and offers to reload it on the CPU; the app stays usable.
TEST(DesktopEndToEnd, DeviceFailureOffersTheCpu) {
    QTemporaryDir data;
    qputenv("EMBER_TEST_DEVICE_FAULT", "40");
    std::unique_ptr<AppShell> app = startApp(data.path(), fixture(QStringLiteral("scripted.gguf")));
    ASSERT_TRUE(app);
    EngineController* engine = app->engine();
    ChatController* chat = app->chat();
    ASSERT_TRUE(waitUntil([&] { return engine->state() == EngineController::Ready; })) << engine->lastError().toStdString();
    ASSERT_TRUE(waitUntil([&] { return chat->storageReady(); }));
    qunsetenv("EMBER_TEST_DEVICE_FAULT");  // read when a backend is made: the reload below gets a sound one
    Replies replies(chat);
    typeText(findItem(app->window(), QStringLiteral("composerInput")), QStringLiteral("Write\n"));
    const Reply failed = replies.next();
    EXPECT_EQ(failed.state, QStringLiteral("failed"));
    ASSERT_TRUE(waitUntil([&] { return !engine->deviceFailure().isEmpty(); }));
    EXPECT_TRUE(engine->deviceFailure().contains(QStringLiteral("device was lost"))) << engine->deviceFailure().toStdString();
    EXPECT_EQ(engine->state(), EngineController::Failed);
    QQuickItem* notice = findItem(app->window(), QStringLiteral("deviceFailureNotice"));
    ASSERT_TRUE(notice);
    QQuickItem* reload = findItem(app->window(), QStringLiteral("noticeActionButton"));
    ASSERT_TRUE(reload);
    EXPECT_EQ(reload->property("text").toString(), QStringLiteral("Reload on the CPU"));
    saveScreenshot(app->window(), QStringLiteral("device-failure"));

    click(reload);
    ASSERT_TRUE(waitUntil([&] { return engine->state() == EngineController::Ready; })) << engine->lastError().toStdString();
    EXPECT_TRUE(engine->deviceFailure().isEmpty());
    EXPECT_TRUE(engine->backendName().startsWith(QStringLiteral("CPU"))) << engine->backendName().toStdString();
    EXPECT_FALSE(findItem(app->window(), QStringLiteral("deviceFailureNotice")));
    typeText(findItem(app->window(), QStringLiteral("composerInput")), QStringLiteral("Write\n"));
    EXPECT_EQ(replies.next().state, QStringLiteral("complete"));
}

// The keyboard: Esc stops an answer, Ctrl+Shift+C copies the last answer, Ctrl+N starts a new chat.
TEST(DesktopEndToEnd, KeyboardShortcuts) {
    QTemporaryDir data;
    std::unique_ptr<AppShell> app = startApp(data.path(), fixture(QStringLiteral("scripted-endless.gguf")));
    ASSERT_TRUE(app);
    QQuickWindow* window = app->window();
    ChatController* chat = app->chat();
    ASSERT_TRUE(waitUntil([&] { return app->engine()->state() == EngineController::Ready && chat->storageReady(); }));
    Replies replies(chat);
    typeText(findItem(window, QStringLiteral("composerInput")), QStringLiteral("talk\n"));
    ASSERT_TRUE(waitUntil([&] { return chat->messages()->count() == 2 && chat->messageText(1).size() > 60; }));
    pressKey(window, Qt::Key_Escape);
    Reply stopped = replies.next();
    EXPECT_EQ(stopped.state, QStringLiteral("stopped"));
    EXPECT_LE(stopped.tokensAfterStop, 1);
    QGuiApplication::clipboard()->clear();
    pressKey(window, Qt::Key_C, Qt::ControlModifier | Qt::ShiftModifier);
    EXPECT_EQ(QGuiApplication::clipboard()->text(), chat->messageText(1));
    EXPECT_FALSE(chat->conversationId().isEmpty());
    pressKey(window, Qt::Key_N, Qt::ControlModifier);
    EXPECT_TRUE(chat->conversationId().isEmpty());
    EXPECT_EQ(chat->messages()->count(), 0);
    EXPECT_EQ(chat->conversations()->count(), 1) << "the old chat stays in the sidebar";
}

}  // namespace
}  // namespace ember::desktop
