// SPDX-License-Identifier: MIT
#include "window_snapshot.h"

#include <QGuiApplication>
#include <QImage>
#include <QQuickWindow>
#include <QTimer>
#include <cstdio>
#include <memory>

#include "app_shell.h"
#include "inference/engine_controller.h"

namespace ember::desktop {

namespace {

constexpr int kSettleMs = 800;  // pending polish, image loading and the page transition

void saveAndQuit(AppShell* shell, const QString& file) {
    QTimer::singleShot(kSettleMs, shell, [shell, file] {
        const EngineController* engine = shell->engine();
        const QImage image = shell->window() ? shell->window()->grabWindow() : QImage();
        int code = 0;
        if (image.isNull() || !image.save(file)) {
            std::fprintf(stderr, "ember: %s: the window could not be saved\n", qPrintable(file));
            code = 1;
        } else if (engine->state() == EngineController::Failed) {
            std::fprintf(stderr, "ember: %s saved; the model did not load: %s\n", qPrintable(file),
                         qPrintable(engine->lastError()));
            code = 1;
        } else if (engine->state() == EngineController::Ready) {
            std::printf("ember: %s saved with %s loaded (%s)\n", qPrintable(file), qPrintable(engine->modelPath()),
                        qPrintable(engine->backendName()));
        } else {
            std::printf("ember: %s saved, no model loaded\n", qPrintable(file));
        }
        std::fflush(stdout);
        QGuiApplication::exit(code);
    });
}

}  // namespace

void snapshotWhenSettled(AppShell* shell, const QString& file) {
    EngineController* engine = shell->engine();
    if (engine->state() != EngineController::Loading) {
        saveAndQuit(shell, file);
        return;
    }
    auto settled = std::make_shared<QMetaObject::Connection>();
    *settled = QObject::connect(engine, &EngineController::stateChanged, shell, [shell, engine, file, settled] {
        if (engine->state() == EngineController::Ready || engine->state() == EngineController::Failed) {
            QObject::disconnect(*settled);
            saveAndQuit(shell, file);
        }
    });
}

}  // namespace ember::desktop
