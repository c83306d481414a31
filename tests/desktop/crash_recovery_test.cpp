// SPDX-License-Identifier: MIT
// Kill during write: a process answering (desktop_crash_driver) is killed with SIGKILL while an answer streams
// and is being saved. Reopening the data folder with the app's chat core shows every completed message and the
// partial answer, marked interrupted, with the text the last periodic save committed.
#include <gtest/gtest.h>

#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "app_harness.h"
#include "chat/chat_controller.h"
#include "chat/image_cache.h"
#include "inference/engine_controller.h"
#include "settings/app_settings.h"
#include "storage/conversation_store.h"

namespace ember::desktop {
namespace {

using namespace test;

TEST(DesktopCrashRecovery, KilledMidAnswerKeepsCompletedAndPartialMessages) {
    QTemporaryDir data;
    ASSERT_TRUE(data.isValid());
    const QJsonObject want = expected();
    ASSERT_FALSE(want.isEmpty());
    const QString answer = want[QStringLiteral("answer")].toString();
    const QString cycle = want[QStringLiteral("cycle")].toString();

    QProcess driver;
    driver.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("EMBER_PARTIAL_SAVE_MS"), QStringLiteral("100"));
    driver.setProcessEnvironment(env);
    driver.start(QStringLiteral(EMBER_TEST_BIN_DIR "/desktop_crash_driver"),
                 {data.path(), fixture(QStringLiteral("scripted.gguf")), fixture(QStringLiteral("scripted-endless.gguf"))});
    ASSERT_TRUE(driver.waitForStarted());
    // Kill once the answer in flight has been committed with more than the whole scripted answer in it, twice.
    int partials = 0;
    QByteArray out;
    const bool reached = waitUntil([&] {
        out += driver.readAllStandardOutput();
        partials = static_cast<int>(out.count("PARTIAL"));
        return partials >= 2 || driver.state() == QProcess::NotRunning;
    });
    ASSERT_TRUE(reached && driver.state() == QProcess::Running) << "driver output: " << out.toStdString();
    driver.kill();  // SIGKILL: no destructor, no last save
    ASSERT_TRUE(driver.waitForFinished());
    EXPECT_EQ(driver.exitStatus(), QProcess::CrashExit);

    AppSettings settings(QDir(data.path()).filePath(QStringLiteral("settings.ini")));
    ImageCache images;
    ConversationStore store;
    EngineController engine;
    ChatController chat(&engine, &store, &settings, &images);
    store.open(QDir(data.path()).filePath(QStringLiteral("conversations.sqlite")));
    ASSERT_TRUE(waitUntil([&] { return chat.storageReady() && chat.conversations()->count() == 1; }));
    chat.openConversation(chat.conversations()->idAt(0));
    ASSERT_TRUE(waitUntil([&] { return chat.messages()->count() == 4; })) << chat.messages()->count();
    auto state = [&](int row) { return chat.messages()->index(row).data(MessageListModel::StateRole).toString(); };
    EXPECT_EQ(chat.messageText(0), QStringLiteral("first question"));
    EXPECT_EQ(state(0), QStringLiteral("complete"));
    EXPECT_EQ(chat.messageText(1), answer);
    EXPECT_EQ(state(1), QStringLiteral("complete"));
    EXPECT_EQ(chat.messageText(2), QStringLiteral("second question"));
    EXPECT_EQ(state(3), QStringLiteral("interrupted"));
    const QString partial = chat.messageText(3);
    EXPECT_GT(partial.size(), 0);
    QString script = answer;
    while (script.size() < partial.size()) script += cycle;
    EXPECT_TRUE(script.startsWith(partial)) << "the partial answer is a prefix of what the model wrote: "
                                            << partial.toStdString();
}

}  // namespace
}  // namespace ember::desktop
