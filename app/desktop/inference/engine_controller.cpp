// SPDX-License-Identifier: MIT
#include "engine_controller.h"

#include <QLoggingCategory>
#include <QRegularExpression>

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "engine_worker.h"
#include "ui/assign_if_changed.h"
#include "ui/stall_monitor.h"

namespace ember::desktop {

Q_LOGGING_CATEGORY(lcEngineController, "ember.desktop.engine")

namespace {

void lowerCurrentThreadPriority() {
#ifdef __linux__
    // Linux keeps a nice value per thread, and threads created later by this one start with it.
    const int niceness = qEnvironmentVariableIsSet("EMBER_ENGINE_NICE") ? qEnvironmentVariableIntValue("EMBER_ENGINE_NICE") : 5;
    if (setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), niceness) != 0)
        qCDebug(lcEngineController) << "could not lower the engine thread's priority";
#endif
}

}  // namespace

EngineController::EngineController(StallMonitor* stalls, QObject* parent)
    : QObject(parent), m_worker(new EngineWorker(&m_stream)), m_stalls(stalls) {
    qRegisterMetaType<ember::desktop::ModelStatus>();
    qRegisterMetaType<ember::desktop::TurnRequest>();
    qRegisterMetaType<ember::desktop::TurnOutcome>();
    m_thread.setObjectName(QStringLiteral("ember-engine"));
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(m_worker, &EngineWorker::loadProgress, this, [this](double f) {
        m_loadProgress = f;
        Q_EMIT loadProgressChanged();
    });
    connect(m_worker, &EngineWorker::modelLoaded, this, &EngineController::onModelLoaded);
    connect(m_worker, &EngineWorker::backendsListed, this, [this](const QStringList& names, const QStringList& labels) {
        m_backendChoices = names;
        m_backendLabels = labels;
        Q_EMIT backendsChanged();
    });
    connect(m_worker, &EngineWorker::loadFailed, this, &EngineController::onLoadFailed);
    connect(m_worker, &EngineWorker::loadFailedOnDevice, this, &EngineController::setDeviceFailure);
    connect(m_worker, &EngineWorker::streamReady, this, &EngineController::onStreamReady);
    connect(m_worker, &EngineWorker::turnFinished, this, &EngineController::onTurnFinished);
    connect(m_worker, &EngineWorker::readingImage, this, &EngineController::readingImage);
    connect(m_worker, &EngineWorker::imageNotice, this, &EngineController::imageNotice);
    // The engine thread (and the compute threads it starts, which inherit this) yields the CPU to the GUI thread:
    // on a machine with few cores a busy engine must not delay frames and input.
    connect(&m_thread, &QThread::started, &m_thread, [] { lowerCurrentThreadPriority(); }, Qt::DirectConnection);
    m_thread.start();
    QMetaObject::invokeMethod(m_worker, [w = m_worker] { w->listBackends(); }, Qt::QueuedConnection);
}

EngineController::~EngineController() {
    // Leaving: stop what runs, let the worker finish its current step, and join the thread.
    m_worker->requestCancelLoad(m_nextLoad);
    m_worker->requestStop(m_nextTurn);
    m_thread.quit();
    m_thread.wait();
}

QString EngineController::backendName() const {
    // "cpu (avx2, 2 threads)" -> "CPU (AVX2, 2 threads)"; "vulkan (...)" -> "Vulkan (...)".
    QString name = m_status.backend;
    if (name.isEmpty()) return name;
    for (const char* acronym : {"cpu", "cuda", "hip", "avx2", "avx-vnni", "avx512", "neon"})
        name.replace(QRegularExpression(QStringLiteral("\\b%1\\b").arg(QLatin1String(acronym))),
                     QString::fromLatin1(acronym).toUpper());
    return name.left(1).toUpper() + name.mid(1);
}

void EngineController::loadModel(const QString& pathOrUrl, int threads, qint64 contextLength, const QString& backend,
                                 const QString& projector) {
    const QUrl url(pathOrUrl);
    const QString path = url.isLocalFile() ? url.toLocalFile() : pathOrUrl;
    if (path.isEmpty()) return;
    ++m_pendingLoads;
    m_lastThreads = threads;
    m_lastContextLength = contextLength;
    m_lastProjector = projector;
    setDeviceFailure({});
    if (m_currentLoad != 0) m_worker->requestCancelLoad(m_currentLoad);  // a newer load supersedes a queued one
    m_currentLoad = m_nextLoad++;
    m_loadingPath = path;
    m_loadProgress = 0;
    Q_EMIT loadProgressChanged();
    setError({});
    setState(Loading);
    QMetaObject::invokeMethod(
        m_worker,
        [w = m_worker, id = m_currentLoad, path, threads, contextLength, backend, projector] {
            w->loadModel(id, path, threads, contextLength, backend, projector);
        },
        Qt::QueuedConnection);
}

void EngineController::reloadOnCpu() {
    if (!m_loadingPath.isEmpty())
        loadModel(m_loadingPath, m_lastThreads, m_lastContextLength, QStringLiteral("cpu"), m_lastProjector);
}

void EngineController::setDeviceFailure(const QString& failure) {
    if (!assignIfChanged(m_deviceFailure, failure)) return;
    Q_EMIT deviceFailureChanged();
}

void EngineController::cancelLoad() {
    if (m_state == Loading) m_worker->requestCancelLoad(m_currentLoad);
}

void EngineController::unloadModel() {
    stop();
    m_status = {};
    m_contextUsed = 0;
    Q_EMIT modelChanged();
    Q_EMIT contextChanged();
    setState(NoModel);
    QMetaObject::invokeMethod(m_worker, [w = m_worker] { w->unloadModel(); }, Qt::QueuedConnection);
}

void EngineController::stop() {
    if (m_activeTurn != 0) m_worker->requestStop(m_activeTurn);
}

quint64 EngineController::startTurn(TurnRequest request) {
    request.id = m_nextTurn++;
    const bool wasGenerating = generating();
    m_activeTurn = request.id;
    if (!wasGenerating) Q_EMIT generatingChanged();
    updatePhase();
    QMetaObject::invokeMethod(m_worker, [w = m_worker, request] { w->runTurn(request); }, Qt::QueuedConnection);
    return request.id;
}

void EngineController::setState(State state) {
    if (!assignIfChanged(m_state, state)) return;
    updatePhase();
    Q_EMIT stateChanged();
}

void EngineController::setError(const QString& error) {
    if (!assignIfChanged(m_lastError, error)) return;
    Q_EMIT lastErrorChanged();
}

void EngineController::onModelLoaded(const ModelStatus& status) {
    if (--m_pendingLoads > 0) return;  // a newer load is queued: this model is about to be replaced
    m_status = status;
    m_contextUsed = 0;
    m_loadProgress = 1;
    Q_EMIT loadProgressChanged();
    Q_EMIT modelChanged();
    Q_EMIT contextChanged();
    setState(Ready);
    Q_EMIT modelLoaded();
}

void EngineController::onLoadFailed(const QString& error, bool cancelled) {
    if (--m_pendingLoads > 0) return;
    m_status = {};
    m_contextUsed = 0;
    Q_EMIT modelChanged();
    Q_EMIT contextChanged();
    setError(cancelled ? QString() : error);
    setState(cancelled ? NoModel : Failed);
    Q_EMIT loadFailed(error, cancelled);
}

void EngineController::onStreamReady() {
    const StreamDelta delta = m_stream.take();
    if (delta.empty()) return;
    Q_EMIT streamed(delta.turnId, delta.content, delta.reasoning, delta.generatedTokens);
}

void EngineController::onTurnFinished(const TurnOutcome& outcome) {
    onStreamReady();  // text that arrived after the last notification was handled
    if (outcome.contextLength > 0) {
        m_contextUsed = outcome.contextUsed;
        m_status.contextLength = outcome.contextLength;
        Q_EMIT contextChanged();
    }
    if (!outcome.error.isEmpty()) setError(outcome.error);
    if (outcome.deviceFailed) {  // the worker released the model: nothing can run until a reload
        m_status = {};
        m_contextUsed = 0;
        Q_EMIT modelChanged();
        Q_EMIT contextChanged();
        setDeviceFailure(outcome.error);
        setState(Failed);
    }
    if (outcome.id == m_activeTurn) {
        m_activeTurn = 0;
        Q_EMIT generatingChanged();
        updatePhase();
    }
    Q_EMIT turnFinished(outcome);
}

void EngineController::updatePhase() {
    if (!m_stalls) return;
    if (m_state == Loading)
        m_stalls->setPhase(StallMonitor::Phase::Loading);
    else if (m_activeTurn != 0)
        m_stalls->setPhase(StallMonitor::Phase::Generating);
    else
        m_stalls->setPhase(StallMonitor::Phase::Idle);
}

void EngineController::postServerJob(server::EngineJob job) {
    QMetaObject::invokeMethod(
        m_worker, [worker = m_worker, job = std::move(job)] { worker->runServerJob(job); }, Qt::QueuedConnection);
}

}  // namespace ember::desktop
