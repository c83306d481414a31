// SPDX-License-Identifier: MIT
// The engine as the GUI sees it: a QObject on the GUI thread that owns the engine thread and its EngineWorker,
// forwards requests as queued calls, turns the worker's signals into properties (model, backend, context use,
// load progress) and stops a turn by a direct, thread-safe call (never a queued call that would wait behind the
// generation it means to stop).
//
// Never blocks the GUI thread: loading, generating and unloading all happen on the engine thread.
#pragma once

#include <QObject>
#include <QString>
#include <QThread>
#include <QUrl>
#include <QtQml/qqmlregistration.h>

#include "engine_host.h"
#include "engine_types.h"
#include "stream_buffer.h"

namespace ember::desktop {

class EngineWorker;
class StallMonitor;

class EngineController : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("The application creates the engine controller")
    Q_PROPERTY(State state READ state NOTIFY stateChanged)
    Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
    Q_PROPERTY(double loadProgress READ loadProgress NOTIFY loadProgressChanged)
    Q_PROPERTY(QString loadingPath READ loadingPath NOTIFY stateChanged)
    Q_PROPERTY(QString modelPath READ modelPath NOTIFY modelChanged)
    Q_PROPERTY(QString modelName READ modelName NOTIFY modelChanged)
    Q_PROPERTY(QString architecture READ architecture NOTIFY modelChanged)
    Q_PROPERTY(QString backendName READ backendName NOTIFY modelChanged)
    Q_PROPERTY(QString deviceName READ deviceName NOTIFY modelChanged)      // where the model runs
    Q_PROPERTY(QString deviceReason READ deviceReason NOTIFY modelChanged)  // why there (one line)
    Q_PROPERTY(QString deviceNotice READ deviceNotice NOTIFY modelChanged)  // the model could not go wholly on the GPU
    // Why the GPU failed (device lost, out of memory) during a turn or a load; empty otherwise. The model is then
    // unloaded and reloadOnCpu() offers the way on.
    Q_PROPERTY(QString deviceFailure READ deviceFailure NOTIFY deviceFailureChanged)
    // How answers are drafted, as the engine's word for it ("none", "mtp", "dflash": speculation_name).
    Q_PROPERTY(QString speculation READ speculation NOTIFY modelChanged)
    Q_PROPERTY(QStringList backendChoices READ backendChoices NOTIFY backendsChanged)  // make_backend names
    Q_PROPERTY(QStringList backendLabels READ backendLabels NOTIFY backendsChanged)    // for people
    Q_PROPERTY(bool supportsThinking READ supportsThinking NOTIFY modelChanged)
    Q_PROPERTY(bool supportsPreserveThinking READ supportsPreserveThinking NOTIFY modelChanged)
    Q_PROPERTY(bool supportsReasoningEffort READ supportsReasoningEffort NOTIFY modelChanged)
    Q_PROPERTY(bool canSeeImages READ canSeeImages NOTIFY modelChanged)
    Q_PROPERTY(QString visionProjector READ visionProjector NOTIFY modelChanged)    // the paired projector file
    Q_PROPERTY(QString projectorProblem READ projectorProblem NOTIFY modelChanged)  // why a projector was not used
    Q_PROPERTY(QString templateProblem READ templateProblem NOTIFY modelChanged)
    Q_PROPERTY(qint64 contextUsed READ contextUsed NOTIFY contextChanged)
    Q_PROPERTY(qint64 contextLength READ contextLength NOTIFY contextChanged)
    Q_PROPERTY(QString lastError READ lastError NOTIFY lastErrorChanged)

public:
    enum State { NoModel, Loading, Ready, Failed };
    Q_ENUM(State)

    explicit EngineController(StallMonitor* stalls = nullptr, QObject* parent = nullptr);
    ~EngineController() override;

    State state() const { return m_state; }
    bool generating() const { return m_activeTurn != 0; }
    double loadProgress() const { return m_loadProgress; }
    QString loadingPath() const { return m_loadingPath; }
    QString modelPath() const { return m_status.path; }
    QString modelName() const { return m_status.name; }
    QString architecture() const { return m_status.architecture; }
    QString backendName() const;
    QString speculation() const { return speculationName(m_status.speculation); }
    QString deviceName() const { return m_status.device; }
    QString deviceReason() const { return m_status.deviceReason; }
    QString deviceNotice() const { return m_status.deviceNotice; }
    QString deviceFailure() const { return m_deviceFailure; }
    QStringList backendChoices() const { return m_backendChoices; }
    QStringList backendLabels() const { return m_backendLabels; }
    bool supportsThinking() const { return m_status.supportsThinking; }
    bool supportsPreserveThinking() const { return m_status.supportsPreserveThinking; }
    bool supportsReasoningEffort() const { return m_status.supportsReasoningEffort; }
    bool canSeeImages() const { return !m_status.visionProjector.isEmpty(); }
    QString visionProjector() const { return m_status.visionProjector; }
    QString projectorProblem() const { return m_status.projectorProblem; }
    QString templateProblem() const { return m_status.templateProblem; }
    qint64 contextUsed() const { return m_contextUsed; }
    qint64 contextLength() const { return m_status.contextLength; }
    QString lastError() const { return m_lastError; }
    const ModelStatus& status() const { return m_status; }

    // Loads a model file (a path or a file: URL) on the engine thread; the current model is released first.
    // projector: the vision projector to pair (empty: the first mmproj*.gguf beside the model that fits it).
    Q_INVOKABLE void loadModel(const QString& pathOrUrl, int threads = 0, qint64 contextLength = 4096,
                               const QString& backend = QStringLiteral("auto"), const QString& projector = {});
    Q_INVOKABLE void cancelLoad();
    // Loads the last model again on the CPU backend (after its GPU failed), with the same threads and context.
    Q_INVOKABLE void reloadOnCpu();
    Q_INVOKABLE void unloadModel();
    // Stops the running turn (and any queued one) before its next token.
    Q_INVOKABLE void stop();

    // Queues a turn; returns its id. The reply arrives as streamed() and then turnFinished().
    quint64 startTurn(TurnRequest request);
    quint64 activeTurn() const { return m_activeTurn; }
    // Thread-safe: runs a local server job on the engine thread, after the turns and jobs queued before it.
    void postServerJob(server::EngineJob job);

Q_SIGNALS:
    void stateChanged();
    void generatingChanged();
    void loadProgressChanged();
    void modelChanged();
    void backendsChanged();
    void contextChanged();
    void lastErrorChanged();
    void deviceFailureChanged();
    void modelLoaded();
    void loadFailed(const QString& error, bool cancelled);
    void streamed(quint64 turnId, const QString& content, const QString& reasoning, qint64 generatedTokens);
    void turnFinished(const ember::desktop::TurnOutcome& outcome);
    void readingImage(quint64 turnId, int done, int total);   // before each image of a turn is encoded
    void imageNotice(quint64 turnId, const QString& notice);  // e.g. an image read downscaled to the limit

private:
    void setState(State state);
    void setError(const QString& error);
    void setDeviceFailure(const QString& failure);
    void onModelLoaded(const ModelStatus& status);
    void onLoadFailed(const QString& error, bool cancelled);
    void onStreamReady();
    void onTurnFinished(const TurnOutcome& outcome);
    void updatePhase();

    QThread m_thread;
    StreamBuffer m_stream;
    EngineWorker* m_worker;  // lives on m_thread; deleted when it finishes
    StallMonitor* m_stalls;
    State m_state = NoModel;
    double m_loadProgress = 0;
    QString m_loadingPath;
    int m_pendingLoads = 0;
    quint64 m_nextLoad = 1;
    quint64 m_currentLoad = 0;  // the newest load asked for
    ModelStatus m_status;
    QStringList m_backendChoices{QStringLiteral("cpu")};
    QStringList m_backendLabels{QStringLiteral("CPU")};
    qint64 m_contextUsed = 0;
    QString m_lastError;
    QString m_deviceFailure;
    // The last load's threads, context and projector (its path is m_loadingPath), for reloadOnCpu().
    int m_lastThreads = 0;
    qint64 m_lastContextLength = 4096;
    QString m_lastProjector;
    quint64 m_nextTurn = 1;
    quint64 m_activeTurn = 0;  // the newest turn not finished yet (0: none)
};

}  // namespace ember::desktop
