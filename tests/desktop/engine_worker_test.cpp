// SPDX-License-Identifier: MIT
// The engine worker driven directly on the test thread (its signals arrive synchronously), so that cancel and stop
// are tested at exact moments: cancel before a load starts, during it (at its first progress report), and a late
// cancel that must not reach the next load; stop before a turn runs and from inside the stream (the turn ends with
// no further token). Streaming parser integration: a thinking turn of the scripted model streams its reasoning,
// then its answer, in several pieces that add up to exactly the script, with the turn's statistics.
#include <gtest/gtest.h>

#include <QJsonObject>
#include <QSignalSpy>

#include "app_harness.h"
#include "inference/engine_worker.h"
#include "inference/stream_buffer.h"

namespace ember::desktop {
namespace {

using namespace test;

struct Worker {
    StreamBuffer stream;
    EngineWorker worker{&stream};
    QSignalSpy loaded{&worker, &EngineWorker::modelLoaded};
    QSignalSpy failed{&worker, &EngineWorker::loadFailed};
    QSignalSpy finished{&worker, &EngineWorker::turnFinished};

    bool load(quint64 id, const QString& name) {
        worker.loadModel(id, fixture(name), 0, 2048, QStringLiteral("cpu"), {});
        return loaded.count() > 0 && loaded.last().at(0).value<ModelStatus>().path.endsWith(name);
    }
    TurnOutcome outcome() const { return finished.last().at(0).value<TurnOutcome>(); }
};

TurnRequest turn(quint64 id, bool thinking, int maxTokens = -1) {
    TurnRequest r;
    r.id = id;
    r.contextLength = 2048;
    r.conversation.messages.push_back({{"role", "user"}, {"content", "Write add"}});
    r.conversation.kwargs["enable_thinking"] = thinking;
    r.options.max_tokens = maxTokens;
    r.options.on_context_full = ContextFullPolicy::stop;
    return r;
}

TEST(EngineWorker, CancelBeforeTheLoadStarts) {
    Worker w;
    w.worker.requestCancelLoad(1);
    w.worker.loadModel(1, fixture(QStringLiteral("scripted.gguf")), 0, 2048, QStringLiteral("cpu"), {});
    ASSERT_EQ(w.failed.count(), 1);
    EXPECT_TRUE(w.failed.at(0).at(1).toBool()) << "reported as cancelled";
    EXPECT_EQ(w.loaded.count(), 0);
}

TEST(EngineWorker, CancelDuringTheLoad) {
    Worker w;
    QSignalSpy progress(&w.worker, &EngineWorker::loadProgress);
    QObject::connect(&w.worker, &EngineWorker::loadProgress, [&] { w.worker.requestCancelLoad(2); });
    w.worker.loadModel(2, fixture(QStringLiteral("scripted.gguf")), 0, 2048, QStringLiteral("cpu"), {});
    EXPECT_GE(progress.count(), 1);
    ASSERT_EQ(w.failed.count(), 1);
    EXPECT_TRUE(w.failed.at(0).at(1).toBool());
    EXPECT_EQ(w.loaded.count(), 0);
}

TEST(EngineWorker, LateCancelDoesNotReachTheNextLoad) {
    Worker w;
    ASSERT_TRUE(w.load(3, QStringLiteral("scripted.gguf")));
    w.worker.requestCancelLoad(3);  // too late: load 3 is done
    ASSERT_TRUE(w.load(4, QStringLiteral("scripted-plain.gguf")));
    EXPECT_EQ(w.failed.count(), 0);
}

TEST(EngineWorker, BadBackendFailsWithOneLine) {
    Worker w;
    w.worker.loadModel(1, fixture(QStringLiteral("scripted.gguf")), 0, 2048, QStringLiteral("nosuchbackend"), {});
    ASSERT_EQ(w.failed.count(), 1);
    EXPECT_FALSE(w.failed.at(0).at(1).toBool());
    const QString error = w.failed.at(0).at(0).toString();
    EXPECT_TRUE(error.contains(QStringLiteral("nosuchbackend"))) << error.toStdString();
    EXPECT_FALSE(error.contains(QLatin1Char('\n')));
}

// The app carries the engine's Speculation; it becomes a word only where QML or the stored JSON reads it.
TEST(EngineTypes, SpeculationIsAWordOnlyForQml) {
    EXPECT_EQ(speculationName(Speculation::none), QStringLiteral("none"));
    EXPECT_EQ(speculationName(Speculation::mtp), QStringLiteral("mtp"));
    EXPECT_EQ(speculationName(Speculation::dflash), QStringLiteral("dflash"));
    TurnStats stats;
    stats.speculation = Speculation::dflash;
    EXPECT_EQ(stats.toVariantMap().value(QStringLiteral("speculation")), QStringLiteral("dflash"));
}

TEST(EngineWorker, ThinkingTurnStreamsReasoningThenAnswer) {
    Worker w;
    ASSERT_TRUE(w.load(1, QStringLiteral("scripted.gguf")));
    const ModelStatus status = w.loaded.last().at(0).value<ModelStatus>();
    EXPECT_TRUE(status.supportsThinking);
    EXPECT_TRUE(status.supportsPreserveThinking);
    EXPECT_EQ(status.speculation, Speculation::none);
    EXPECT_TRUE(status.backend.startsWith(QStringLiteral("cpu"))) << status.backend.toStdString();

    QString reasoning, content;
    int deltas = 0;
    bool contentBeforeReasoningEnded = false;
    QObject::connect(&w.worker, &EngineWorker::streamReady, [&] {
        const StreamDelta d = w.stream.take();
        ++deltas;
        if (!d.reasoning.isEmpty() && !content.isEmpty()) contentBeforeReasoningEnded = true;
        reasoning += d.reasoning;
        content += d.content;
    });
    w.worker.runTurn(turn(1, true));
    ASSERT_EQ(w.finished.count(), 1);
    const TurnOutcome o = w.outcome();
    const QJsonObject want = expected();
    EXPECT_EQ(o.stopReason, QStringLiteral("end_of_generation")) << o.error.toStdString();
    EXPECT_EQ(reasoning, want[QStringLiteral("reasoning")].toString());
    EXPECT_EQ(content, want[QStringLiteral("answer")].toString());
    EXPECT_EQ(o.reasoning, reasoning);
    EXPECT_EQ(o.content, content);
    EXPECT_GT(deltas, 10) << "streamed piece by piece";
    EXPECT_FALSE(contentBeforeReasoningEnded);
    EXPECT_EQ(o.stats.generatedTokens, want[QStringLiteral("thinking_turn_tokens")].toInt());
    EXPECT_GT(o.stats.promptTokens, 0);
    EXPECT_GE(o.stats.timeToFirstTokenSeconds, 0);
    EXPECT_LT(o.stats.draftAcceptance, 0) << "no speculation, no acceptance figure";
    EXPECT_EQ(o.stats.speculation, Speculation::none);
    EXPECT_EQ(o.stats.toVariantMap().value(QStringLiteral("speculation")), QStringLiteral("none"));
    EXPECT_EQ(o.tokensAfterStop, -1);
    EXPECT_EQ(o.contextLength, 2048);
    EXPECT_EQ(o.contextUsed, o.stats.promptTokens + o.stats.generatedTokens);

    reasoning.clear();
    content.clear();
    w.worker.runTurn(turn(2, false));
    EXPECT_TRUE(reasoning.isEmpty()) << "enable_thinking=false: no reasoning";
    EXPECT_EQ(content, want[QStringLiteral("answer")].toString());
}

TEST(EngineWorker, StopBeforeTheTurnRuns) {
    Worker w;
    ASSERT_TRUE(w.load(1, QStringLiteral("scripted-endless.gguf")));
    w.worker.requestStop(7);
    w.worker.runTurn(turn(7, true));
    EXPECT_EQ(w.outcome().stopReason, QStringLiteral("cancelled"));
    EXPECT_EQ(w.outcome().tokensAfterStop, 0);
    w.worker.runTurn(turn(8, true, 5));  // a later turn is not affected
    EXPECT_EQ(w.outcome().stopReason, QStringLiteral("max_tokens"));
}

TEST(EngineWorker, StopFromTheStreamEndsTheTurnAtOnce) {
    Worker w;
    ASSERT_TRUE(w.load(1, QStringLiteral("scripted-endless.gguf")));
    QString content;
    QObject::connect(&w.worker, &EngineWorker::streamReady, [&] {
        content += w.stream.take().content;
        if (content.size() > 80) w.worker.requestStop(1);
    });
    w.worker.runTurn(turn(1, false));
    const TurnOutcome o = w.outcome();
    EXPECT_EQ(o.stopReason, QStringLiteral("cancelled"));
    EXPECT_EQ(o.tokensAfterStop, 0) << "a token was generated after the stop";
    EXPECT_LT(o.content.size(), 200);
}

}  // namespace
}  // namespace ember::desktop
