// SPDX-License-Identifier: MIT
// The app's chat core (engine thread, storage thread, chat controller: what the window drives) in a process that
// the kill-during-write test kills. Usage: desktop_crash_driver DATA_DIR FINITE_MODEL ENDLESS_MODEL
// It answers one question completely, then starts an endless answer and prints "PARTIAL <chars>" each time the
// storage thread has committed the answer in flight with more text; it never exits on its own.
#include <QDir>
#include <QGuiApplication>
#include <QTextStream>
#include <cstdio>

#include "chat/chat_controller.h"
#include "chat/image_cache.h"
#include "inference/engine_controller.h"
#include "settings/app_settings.h"
#include "storage/conversation_store.h"

using namespace ember::desktop;

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QGuiApplication app(argc, argv);
    if (argc != 4) {
        std::fprintf(stderr, "usage: desktop_crash_driver DATA_DIR FINITE_MODEL ENDLESS_MODEL\n");
        return 2;
    }
    const QDir data(QString::fromLocal8Bit(argv[1]));
    const QString finite = QString::fromLocal8Bit(argv[2]), endless = QString::fromLocal8Bit(argv[3]);
    AppSettings settings(data.filePath(QStringLiteral("settings.ini")));
    settings.setTemperature(0);
    ImageCache images;
    ConversationStore store;
    EngineController engine;
    ChatController chat(&engine, &store, &settings, &images);
    store.open(data.filePath(QStringLiteral("conversations.sqlite")));

    int phase = 0;  // 0: loading the finite model, 1: first answer, 2: loading the endless model, 3: endless answer
    QObject::connect(&engine, &EngineController::modelLoaded, [&] {
        if (phase == 0) {
            phase = 1;
            chat.send(QStringLiteral("first question"));
        } else if (phase == 2) {
            phase = 3;
            chat.send(QStringLiteral("second question"));
        }
    });
    QObject::connect(&engine, &EngineController::loadFailed, [&](const QString& error, bool) {
        std::fprintf(stderr, "load failed: %s\n", qPrintable(error));
        QCoreApplication::exit(3);
    });
    QObject::connect(&chat, &ChatController::replyFinished, [&](const QString& id, const QString& state, qint64) {
        std::printf("FINISHED %s %s\n", qPrintable(id), qPrintable(state));
        std::fflush(stdout);
        if (phase == 1) {
            phase = 2;
            engine.loadModel(endless);
        }
    });
    int lastLength = 0;
    QObject::connect(&store, &ConversationStore::messageSaved, [&](const QString&, const QString& state, int length) {
        if (phase == 3 && state == QLatin1String("streaming") && length > lastLength) {
            lastLength = length;
            std::printf("PARTIAL %d\n", length);
            std::fflush(stdout);
        }
    });
    QObject::connect(&store, &ConversationStore::opened, [&](bool ok, const QString& error) {
        if (!ok) {
            std::fprintf(stderr, "storage: %s\n", qPrintable(error));
            QCoreApplication::exit(3);
            return;
        }
        engine.loadModel(finite);
    });
    return QGuiApplication::exec();
}
