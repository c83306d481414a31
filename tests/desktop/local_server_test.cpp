// SPDX-License-Identifier: MIT
// The app's Local server switch end to end: the real window on the offscreen platform, the switch clicked in
// Settings, a request from the official openai client (another process) answered by the model loaded in the app
// while a chat turn from the window queues beside it and the GUI thread keeps running its event loop; a
// screenshot of the settings with the server running (<build>/screenshots/settings-local-server.png).
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
#include "engine/engine_controller.h"
#include "server/local_server.h"
#include "ui/stall_monitor.h"

namespace ember::desktop {
namespace {

using namespace test;

constexpr auto kAsk = R"(
import json, sys, openai
client = openai.OpenAI(base_url=sys.argv[1], api_key=sys.argv[2], max_retries=0, timeout=120)
reply = client.chat.completions.create(model="any", temperature=0,
    messages=[{"role": "user", "content": "Write a Python function that adds two numbers."}])
message = reply.choices[0].message
print(json.dumps({"content": message.content, "reasoning": getattr(message, "reasoning_content", None),
                  "model": reply.model, "tokens": reply.usage.completion_tokens}))
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

TEST(DesktopLocalServer, SwitchServesTheLoadedModelWhileTheChatKeepsWorking) {
    QTemporaryDir data;
    std::unique_ptr<AppShell> app = startApp(data.path(), fixture(QStringLiteral("scripted.gguf")), "light");
    ASSERT_TRUE(app);
    QQuickWindow* window = app->window();
    ChatController* chat = app->chat();
    ASSERT_TRUE(waitUntil([&] { return app->engine()->state() == EngineController::Ready && chat->storageReady(); }));
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

    // The client asks the server while the window sends a chat turn: both queue on the one engine thread.
    app->stalls()->reset();
    QProcess client;
    client.start(QStringLiteral(EMBER_TEST_VENV "/bin/python"),
                 {QStringLiteral("-c"), QString::fromUtf8(kAsk), server->address(), QStringLiteral("desktop-key")});
    ASSERT_TRUE(client.waitForStarted());
    QSignalSpy finished(chat, &ChatController::replyFinished);
    ASSERT_TRUE(chat->send(QStringLiteral("Write a Python function that adds two numbers.")));
    ASSERT_TRUE(waitUntil([&] { return client.state() == QProcess::NotRunning && finished.count() == 1; }))
        << client.readAllStandardError().toStdString();
    ASSERT_EQ(client.exitCode(), 0) << client.readAllStandardError().toStdString();
    const QJsonObject reply = QJsonDocument::fromJson(client.readAllStandardOutput()).object();
    EXPECT_EQ(reply[QStringLiteral("content")].toString(), expected()[QStringLiteral("answer")].toString());
    EXPECT_EQ(reply[QStringLiteral("reasoning")].toString(), expected()[QStringLiteral("reasoning")].toString());
    EXPECT_EQ(reply[QStringLiteral("model")].toString(), app->engine()->modelName());
    // The GUI thread ran its event loop all along (the limit is generous: it is a slow, shared test machine).
    double worst = 0;
    for (auto phase : {StallMonitor::Phase::Idle, StallMonitor::Phase::Loading, StallMonitor::Phase::Generating})
        worst = std::max(worst, app->stalls()->maxStallMs(phase));
    std::printf("local server: the longest GUI stall during the request and the chat turn was %.1f ms\n", worst);
    EXPECT_LT(worst, 250.0);

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
