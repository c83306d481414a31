// SPDX-License-Identifier: MIT
// Images end to end in the real window: the vision text fixture with its projector beside it loads as a model that
// sees images (no "cannot see images" notice); an image attached to a question reaches the engine as image tokens
// of the count the projector's grid gives, the answer's statistics say so, the "Reading the image…" line shows
// while it is encoded, the next turn reuses the encoding, and a screenshot of the transcript is kept. A projector that
// does not fit the model is dropped with its reason and the model still loads.
#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUrl>

#include "app_harness.h"
#include "chat/chat_controller.h"
#include "ember/gguf.h"
#include "ember/vision.h"
#include "inference/engine_controller.h"

namespace ember::desktop {
namespace {

using namespace test;

QString fixtureRoot() {
    return QDir(fixtureDir()).filePath(QStringLiteral(".."));
}
QString visionModel() {
    return QDir(fixtureRoot()).filePath(QStringLiteral("qwen35moe/qwen35moe-vision-f32.gguf"));
}
QString projectorFile() {
    return QDir(fixtureRoot()).filePath(QStringLiteral("vision/mmproj-F32.gguf"));
}
QString imageFile() {
    return QDir(fixtureRoot()).filePath(QStringLiteral("vision/image_50x70.png"));
}

// The image tokens the projector's grid gives an image (the engine's own answer, from the keys alone).
int64_t expectedImageTokens(const QString& projector, const QString& image) {
    const gguf::File file = gguf::File::open(projector.toStdString());
    const vision::ProjectorInfo info = vision::read_projector_info(file, projector.toStdString());
    const vision::Image im = vision::load_image(image.toStdString());
    return vision::smart_resize(im.height, im.width, info.patch_size, info.merge, info.limits).tokens();
}

// A folder holding the model and, beside it, `projector` named mmproj-F32.gguf.
bool stageModel(const QTemporaryDir& dir, const QString& projector) {
    return QFile::copy(visionModel(), dir.filePath(QStringLiteral("vision-model.gguf"))) &&
           (projector.isEmpty() || QFile::copy(projector, dir.filePath(QStringLiteral("mmproj-F32.gguf"))));
}

TEST(DesktopVision, AnImageReachesTheModelAsImageTokens) {
    QTemporaryDir data, models;
    ASSERT_TRUE(data.isValid() && models.isValid());
    ASSERT_TRUE(QFile::exists(visionModel())) << "vision text fixture missing: " << visionModel().toStdString();
    ASSERT_TRUE(stageModel(models, projectorFile()));
    const int64_t tokens = expectedImageTokens(projectorFile(), imageFile());
    ASSERT_GT(tokens, 0);

    std::unique_ptr<AppShell> app = startApp(data.path(), models.filePath(QStringLiteral("vision-model.gguf")));
    ASSERT_TRUE(app);
    QQuickWindow* window = app->window();
    ChatController* chat = app->chat();
    EngineController* engine = app->engine();
    ASSERT_TRUE(waitUntil([&] { return engine->state() == EngineController::Ready; }))
        << engine->lastError().toStdString();
    ASSERT_TRUE(waitUntil([&] { return chat->storageReady(); }));
    EXPECT_TRUE(engine->canSeeImages());
    EXPECT_TRUE(engine->visionProjector().endsWith(QStringLiteral("mmproj-F32.gguf")))
        << engine->visionProjector().toStdString();
    EXPECT_TRUE(engine->projectorProblem().isEmpty()) << engine->projectorProblem().toStdString();

    QStringList activities;
    QObject::connect(chat, &ChatController::turnActivityChanged, [&] { activities.append(chat->turnActivity()); });
    QSignalSpy finished(chat, &ChatController::replyFinished);

    chat->attachFiles({QUrl::fromLocalFile(imageFile())});
    ASSERT_TRUE(waitUntil([&] { return chat->attachments()->count() == 1; }));
    pumpEvents(100);
    EXPECT_EQ(findItem(window, QStringLiteral("visionNotice")), nullptr) << "the model sees images: no notice";
    QQuickItem* input = findItem(window, QStringLiteral("composerInput"));
    ASSERT_TRUE(input);
    typeText(input, QStringLiteral("What is in this picture?\n"));
    ASSERT_TRUE(waitUntil([&] { return finished.count() == 1; }));
    EXPECT_EQ(finished.at(0).at(1).toString(), QStringLiteral("complete"));

    ASSERT_EQ(chat->messages()->count(), 2);
    const QVariantMap stats = chat->messages()->index(1).data(MessageListModel::StatsRole).toMap();
    EXPECT_EQ(stats.value(QStringLiteral("imageTokens")).toLongLong(), tokens);
    EXPECT_GT(stats.value(QStringLiteral("imageSeconds")).toDouble(), 0.0);
    EXPECT_GT(stats.value(QStringLiteral("promptTokens")).toLongLong(), tokens);
    EXPECT_TRUE(activities.contains(QStringLiteral("Reading the image…")))
        << activities.join(QStringLiteral(" | ")).toStdString();
    EXPECT_TRUE(chat->turnActivity().isEmpty());
    pumpEvents(300);
    EXPECT_TRUE(saveScreenshot(window, QStringLiteral("chat-image")));

    // A second question about it: the image's encoding is cached, so it is not read again, and the prompt up to
    // the first answer is reused.
    const qsizetype readsBefore = activities.count(QStringLiteral("Reading the image…"));
    typeText(input, QStringLiteral("And the colours?\n"));
    ASSERT_TRUE(waitUntil([&] { return finished.count() == 2; }));
    const QVariantMap again = chat->messages()->index(3).data(MessageListModel::StatsRole).toMap();
    EXPECT_EQ(again.value(QStringLiteral("imageTokens")).toLongLong(), tokens);
    EXPECT_EQ(again.value(QStringLiteral("imageSeconds")).toDouble(), 0.0) << "the encoding was not reused";
    EXPECT_EQ(activities.count(QStringLiteral("Reading the image…")), readsBefore);
    // The model is recurrent: the state comes back to the checkpoint at the first turn's end, past the image.
    EXPECT_GT(again.value(QStringLiteral("reusedTokens")).toLongLong(), tokens) << "the image's prompt was not reused";
}

TEST(DesktopVision, AProjectorThatDoesNotFitIsDroppedWithItsReason) {
    QTemporaryDir data, models;
    ASSERT_TRUE(data.isValid() && models.isValid());
    // Not a projector at all, named like one: the model loads, reads text only, and the reason is kept.
    ASSERT_TRUE(QFile::copy(visionModel(), models.filePath(QStringLiteral("vision-model.gguf"))));
    ASSERT_TRUE(QFile::copy(visionModel(), models.filePath(QStringLiteral("mmproj-broken.gguf"))));
    std::unique_ptr<AppShell> app = startApp(data.path(), QString());
    ASSERT_TRUE(app);
    EngineController* engine = app->engine();
    engine->loadModel(models.filePath(QStringLiteral("vision-model.gguf")), 0, 2048, QStringLiteral("cpu"),
                      models.filePath(QStringLiteral("mmproj-broken.gguf")));
    ASSERT_TRUE(waitUntil([&] { return engine->state() == EngineController::Ready; }))
        << engine->lastError().toStdString();
    EXPECT_FALSE(engine->canSeeImages());
    EXPECT_TRUE(engine->projectorProblem().contains(QStringLiteral("mmproj-broken.gguf")))
        << engine->projectorProblem().toStdString();
    EXPECT_FALSE(engine->projectorProblem().contains(QLatin1Char('\n')));

    app->chat()->attachFiles({QUrl::fromLocalFile(imageFile())});
    ASSERT_TRUE(waitUntil([&] { return findItem(app->window(), QStringLiteral("visionNotice")) != nullptr; }));
}

}  // namespace
}  // namespace ember::desktop
