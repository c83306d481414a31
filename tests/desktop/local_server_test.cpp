// SPDX-License-Identifier: MIT
// The app's Local server switch end to end: the real window on the offscreen platform, the switch clicked in
// Settings, a request from the official openai client (another process) answered by the model loaded in the app;
// while the client's stream holds the engine the window takes typing and its chat turn waits, then runs once the
// client hangs up; a screenshot of the settings with the server running
// (<build>/screenshots/settings-local-server.png).
#include <gtest/gtest.h>

#include <QDir>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>

#include "app_harness.h"
#include "chat/chat_controller.h"
#include "inference/engine_controller.h"
#include "server/local_server.h"
#include "settings/app_settings.h"
#include "ui/stall_monitor.h"

namespace ember::desktop {
namespace {

using namespace test;

// Asks once (the scripted answer), then opens a stream that keeps the engine busy until told "stop" on stdin.
constexpr auto kClient = R"(
import json, sys, openai
client = openai.OpenAI(base_url=sys.argv[1], api_key=sys.argv[2], max_retries=0, timeout=120)
ask = [{"role": "user", "content": "Write a Python function that adds two numbers."}]
reply = client.chat.completions.create(model="any", temperature=0, max_tokens=40, messages=ask)
message = reply.choices[0].message
print(json.dumps({"content": message.content, "reasoning": getattr(message, "reasoning_content", None),
                  "model": reply.model}), flush=True)
stream = client.chat.completions.create(model="any", temperature=0, max_tokens=1000000, messages=ask, stream=True)
for chunk in stream:
    if chunk.choices and chunk.choices[0].delta.content:
        break
print("streaming", flush=True)
sys.stdin.readline()
stream.close()
)";

int freePort() {
    QTcpServer probe;
    probe.listen(QHostAddress::LocalHost, 0);
    return probe.serverPort();
}

// Scrolls the settings so that `item` is in view.
void scrollTo(QQuickItem* item) {
    for (QQuickItem* p = item->parentItem(); p; p = p->parentItem()) {
        if (!p->inherits("QQuickFlickable")) continue;
        QQuickItem* content = p->property("contentItem").value<QQuickItem*>();
        const QPointF at = item->mapToItem(content, QPointF(0, 0));
        const double most = std::max(0.0, p->property("contentHeight").toDouble() - p->height());
        p->setProperty("contentY", std::clamp(at.y() - 40.0, 0.0, most));
        return;
    }
}

TEST(DesktopLocalServer, SwitchServesTheLoadedModelWhileTheWindowKeepsWorking) {
    QTemporaryDir data;
    // The endless scripted model: its answer never ends, so a streamed request holds the engine as long as needed.
    std::unique_ptr<AppShell> app = startApp(data.path(), fixture(QStringLiteral("scripted-endless.gguf")), "light");
    ASSERT_TRUE(app);
    QQuickWindow* window = app->window();
    ChatController* chat = app->chat();
    ASSERT_TRUE(waitUntil([&] { return app->engine()->state() == EngineController::Ready && chat->storageReady(); }));
    app->settings()->setMaxTokens(20);
    LocalServer* server = app->localServer();
    ASSERT_TRUE(server);
    server->setPort(freePort());
    server->setApiKey(QStringLiteral("desktop-key"));

    pressKey(window, Qt::Key_Comma, Qt::ControlModifier);
    ASSERT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("localServerSwitch")) != nullptr; }));
    pumpEvents(400);  // the dialog's opening transition
    QQuickItem* toggle = findItem(window, QStringLiteral("localServerSwitch"));
    scrollTo(toggle);
    pumpEvents(100);
    click(toggle);
    ASSERT_TRUE(waitUntil([&] { return server->running(); })) << server->error().toStdString();
    EXPECT_EQ(server->address(), QStringLiteral("http://127.0.0.1:%1/v1").arg(server->port()));
    EXPECT_TRUE(server->example().contains(QStringLiteral("Authorization: Bearer desktop-key")));
    ASSERT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("localServerExample")) != nullptr; }));
    scrollTo(findItem(window, QStringLiteral("localServerExample")));
    pumpEvents(200);
    ASSERT_TRUE(saveScreenshot(window, QStringLiteral("settings-local-server")));
    EXPECT_TRUE(controlsWithoutAccessibleName(window).isEmpty())
        << controlsWithoutAccessibleName(window).join(", ").toStdString();
    click(findItem(window, QStringLiteral("closeSettingsButton")));
    ASSERT_TRUE(waitUntil([&] { return findItem(window, QStringLiteral("localServerSwitch")) == nullptr; }));

    // The openai client (another process) asks the app's model.
    app->stalls()->reset();
    QProcess client;
    client.start(QStringLiteral(EMBER_TEST_VENV "/bin/python"),
                 {QStringLiteral("-c"), QString::fromUtf8(kClient), server->address(), QStringLiteral("desktop-key")});
    ASSERT_TRUE(client.waitForStarted());
    ASSERT_TRUE(waitUntil([&] { return client.canReadLine() || client.state() == QProcess::NotRunning; }));
    const QJsonObject reply = QJsonDocument::fromJson(client.readLine()).object();
    ASSERT_FALSE(reply.isEmpty()) << client.readAllStandardError().toStdString();
    EXPECT_EQ(reply[QStringLiteral("reasoning")].toString(), expected()[QStringLiteral("reasoning")].toString());
    EXPECT_TRUE(reply[QStringLiteral("content")].toString().startsWith(expected()[QStringLiteral("answer")].toString()))
        << reply[QStringLiteral("content")].toString().toStdString();
    EXPECT_EQ(reply[QStringLiteral("model")].toString(), app->engine()->modelName());

    // While its stream holds the engine, the window answers input, and a chat turn waits for the engine.
    ASSERT_TRUE(waitUntil([&] { return client.canReadLine() || client.state() == QProcess::NotRunning; }));
    ASSERT_EQ(client.readLine().trimmed(), QByteArray("streaming")) << client.readAllStandardError().toStdString();
    QQuickItem* input = findItem(window, QStringLiteral("composerInput"));
    ASSERT_TRUE(input);
    typeText(input, QStringLiteral("typed while serving"));
    EXPECT_EQ(input->property("text").toString(), QStringLiteral("typed while serving"));
    QSignalSpy finished(chat, &ChatController::replyFinished);
    pressKey(window, Qt::Key_Return);
    pumpEvents(500);
    EXPECT_EQ(finished.count(), 0) << "the chat turn ran while the server's stream held the engine";
    EXPECT_EQ(client.state(), QProcess::Running);

    // The client hangs up: its generation stops and the chat turn runs.
    client.write("stop\n");
    ASSERT_TRUE(waitUntil([&] { return client.state() == QProcess::NotRunning && finished.count() == 1; }))
        << client.readAllStandardError().toStdString();
    EXPECT_EQ(client.exitCode(), 0) << client.readAllStandardError().toStdString();
    EXPECT_EQ(chat->messageText(0), QStringLiteral("typed while serving"));
    double worst = 0;
    for (auto phase : {StallMonitor::Phase::Idle, StallMonitor::Phase::Loading, StallMonitor::Phase::Generating})
        worst = std::max(worst, app->stalls()->maxStallMs(phase));
    std::printf("[ stalls   ] local server: longest GUI stall while serving and chatting %.1f ms\n", worst);

    // Off: the port closes without the GUI waiting.
    server->setEnabled(false);
    EXPECT_FALSE(server->running());
    ASSERT_TRUE(waitUntil([&] { return !server->stopping(); }));
    QTcpSocket probe;
    probe.connectToHost(QHostAddress::LocalHost, static_cast<quint16>(server->port()));
    EXPECT_FALSE(probe.waitForConnected(2000)) << "the server still listens after it was switched off";
}

}  // namespace
}  // namespace ember::desktop
