// SPDX-License-Identifier: MIT
// The GUI thread's longest stall while a model loads and while an answer streams, measured by the app's own
// StallMonitor in the real window (offscreen). These are measurements, printed and written to
// <build>/desktop-stalls.txt; the test fails only when something does not work (no answer, no measurement).
#include <gtest/gtest.h>

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "app_harness.h"
#include "chat/chat_controller.h"
#include "inference/engine_controller.h"
#include "settings/app_settings.h"
#include "ui/stall_monitor.h"

namespace ember::desktop {
namespace {

using namespace test;

void record(const QString& what, const StallMonitor& stalls) {
    const QString line = QStringLiteral("%1: longest GUI stall loading %2 ms (%3 samples), generating %4 ms (%5 samples)")
                             .arg(what)
                             .arg(stalls.maxStallMs(StallMonitor::Phase::Loading), 0, 'f', 1)
                             .arg(stalls.samples(StallMonitor::Phase::Loading))
                             .arg(stalls.maxStallMs(StallMonitor::Phase::Generating), 0, 'f', 1)
                             .arg(stalls.samples(StallMonitor::Phase::Generating));
    std::printf("[ stalls   ] %s\n", qPrintable(line));
    QFile out(QStringLiteral(EMBER_TEST_BIN_DIR "/../desktop-stalls.txt"));
    if (out.open(QIODevice::Append | QIODevice::Text)) out.write(line.toUtf8() + '\n');
}

// Loads `model`, lets the window settle, then measures one answer of up to `maxTokens` tokens.
void measure(const QString& what, const QString& model, int maxTokens) {
    QTemporaryDir data;
    ASSERT_TRUE(data.isValid());
    std::unique_ptr<AppShell> app = startApp(data.path(), {});
    ASSERT_TRUE(app);
    ChatController* chat = app->chat();
    EngineController* engine = app->engine();
    ASSERT_TRUE(waitUntil([&] { return chat->storageReady(); }));
    pumpEvents(300);  // the first frames and the conversation list are not part of the measurement
    app->settings()->setMaxTokens(maxTokens);
    app->settings()->setTemperature(0);
    app->stalls()->reset();
    engine->loadModel(model);
    ASSERT_TRUE(waitUntil([&] { return engine->state() != EngineController::Loading; }));
    ASSERT_EQ(engine->state(), EngineController::Ready) << engine->lastError().toStdString();
    pumpEvents(200);
    QSignalSpy finished(chat, &ChatController::replyFinished);
    ASSERT_TRUE(chat->send(QStringLiteral("Write a short story about a lighthouse keeper.")));
    ASSERT_TRUE(waitUntil([&] { return finished.count() == 1; }));
    EXPECT_NE(finished.at(0).at(1).toString(), QStringLiteral("failed"));
    EXPECT_GT(app->stalls()->samples(StallMonitor::Phase::Generating), 0);
    EXPECT_GT(app->stalls()->samples(StallMonitor::Phase::Loading), 0);
    record(what, *app->stalls());
}

TEST(DesktopStalls, SmallModel) {
    const QString model = smallModelPath();
    if (model.isEmpty()) GTEST_SKIP() << "SmolLM2-135M-Instruct is not installed in the venv";
    measure(QStringLiteral("SmolLM2-135M Q4_1, 128 tokens"), model, 128);
}

TEST(DesktopStalls, FastStream) {
    // The endless scripted model streams far faster than a real one and writes one ever-growing paragraph.
    measure(QStringLiteral("scripted fixture, 600 tokens"), fixture(QStringLiteral("scripted-endless.gguf")), 600);
}

}  // namespace
}  // namespace ember::desktop
