// SPDX-License-Identifier: MIT
// The engine on its own thread. An EngineWorker lives on the engine QThread and owns the loaded model and its
// session; the GUI reaches it only through queued calls (loadModel, runTurn) and receives queued signals back.
// Two methods are called directly from the GUI thread and are thread-safe: requestStop() and requestCancelLoad().
// They set atomic flags the engine checks between tokens (and between load steps), so a stop never waits behind
// the generation it stops.
//
// Never touches Qt GUI classes, never blocks on the GUI thread.
#pragma once

#include <QObject>
#include <atomic>
#include <memory>
#include <mutex>

#include "engine_host.h"
#include "engine_types.h"

namespace ember::desktop {

class StreamBuffer;

class EngineWorker : public QObject {
    Q_OBJECT
public:
    explicit EngineWorker(StreamBuffer* stream, QObject* parent = nullptr);
    ~EngineWorker() override;

    // Thread-safe. Stops every turn with an id up to `turnId` (queued or running) before its next token.
    void requestStop(quint64 turnId);
    // Thread-safe. Cancels every load with an id up to `loadId`, running or still queued: it ends with
    // loadFailed(cancelled = true). A cancel that comes after its load finished has no effect on later loads.
    void requestCancelLoad(quint64 loadId);

public Q_SLOTS:
    // projector: the vision projector to pair (the library's choice); empty: the first mmproj*.gguf beside the
    // model that fits it. A projector that cannot be used never keeps the model from loading.
    void loadModel(quint64 loadId, const QString& path, int threads, qint64 contextLength, const QString& backend,
                   const QString& projector);
    // Finds the devices the engine can use (may take a moment: it asks the GPU drivers).
    void listBackends();
    void unloadModel();
    void runTurn(const ember::desktop::TurnRequest& request);
    // A local server request: runs `job` with the model and the server's own session (null slot: no model).
    void runServerJob(const ember::server::EngineJob& job);

Q_SIGNALS:
    void loadProgress(double fraction);
    void backendsListed(const QStringList& names, const QStringList& labels);
    void modelLoaded(const ember::desktop::ModelStatus& status);
    void loadFailed(const QString& error, bool cancelled);
    void loadFailedOnDevice(const QString& error);  // before loadFailed, when the GPU itself failed (e.g. its memory)
    void modelUnloaded();
    void turnStarted(quint64 id);
    void streamReady();  // text waits in the StreamBuffer
    void readingImage(quint64 turnId, int done, int total);   // the turn's images are being encoded
    void imageNotice(quint64 turnId, const QString& notice);  // e.g. an image read downscaled to the model's limit
    void turnFinished(const ember::desktop::TurnOutcome& outcome);

private:
    void ensureSession(qint64 contextLength);
    GenerationResult generate(const TurnRequest& request, const StreamCallback& onChunk);
    // The turn's images decoded for the model (empty when it reads no images); notices for downscaled ones.
    std::vector<vision::Image> decodeImages(const TurnRequest& request);
    bool stopRequested(quint64 turnId) const { return m_stopUpTo.load() >= turnId; }

    StreamBuffer* m_stream;
    std::shared_ptr<LoadedModel> m_model;
    std::unique_ptr<Session> m_session;
    std::unique_ptr<Session> m_serverSession;  // the local server's (its prompt cache apart from the chat's)
    qint64 m_sessionContext = 0;
    ModelStatus m_status;

    std::atomic<quint64> m_stopUpTo{0};
    std::atomic<quint64> m_cancelLoadUpTo{0};
    std::atomic<qint64> m_tokensSoFar{0};     // tokens of the running turn, as last streamed
    std::atomic<qint64> m_tokensAtStop{-1};   // m_tokensSoFar when the stop request arrived
    std::mutex m_sessionMutex;                // guards m_running for requestStop on the GUI thread
    Session* m_running = nullptr;
    quint64 m_runningTurn = 0;
};

}  // namespace ember::desktop
