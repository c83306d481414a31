// SPDX-License-Identifier: MIT
#include "engine_worker.h"

#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QThread>

#include "library.h"
#include "stream_buffer.h"

namespace ember::desktop {

Q_LOGGING_CATEGORY(lcEngine, "ember.desktop.engine")

namespace {

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

bool templateMentions(const std::optional<std::string>& source, std::string_view word) {
    return source && source->find(word) != std::string::npos;
}

// The projector to pair: the one asked for, else the one beside the model that fits it.
std::optional<std::filesystem::path> projectorToPair(const QString& asked, const QString& model) {
    if (!asked.isEmpty()) return asked.toStdString();
    return vision::fitting_projector_beside(model.toStdString());
}

}  // namespace

EngineWorker::EngineWorker(StreamBuffer* stream, QObject* parent) : QObject(parent), m_stream(stream) {}

EngineWorker::~EngineWorker() = default;

void EngineWorker::requestStop(quint64 turnId) {
    quint64 seen = m_stopUpTo.load();
    while (seen < turnId && !m_stopUpTo.compare_exchange_weak(seen, turnId)) {
    }
    std::lock_guard lock(m_sessionMutex);
    if (m_running && m_runningTurn <= turnId) {
        m_tokensAtStop.store(m_tokensSoFar.load());
        m_running->cancel();
    }
}

void EngineWorker::requestCancelLoad(quint64 loadId) {
    quint64 seen = m_cancelLoadUpTo.load();
    while (seen < loadId && !m_cancelLoadUpTo.compare_exchange_weak(seen, loadId)) {
    }
}

void EngineWorker::listBackends() {
    std::string error;
    const std::vector<DeviceInfo> devices = list_devices(&error);
    // "Automatic" first: the device the backend "auto" takes for a model that fits (each load judges its model).
    const DeviceChoice automatic = choose_device(devices, {}, {});
    QStringList names{QStringLiteral("auto"), QStringLiteral("cpu")};
    QStringList labels{tr("Automatic (%1)").arg(automatic.placement == Placement::cpu ? tr("CPU") : qs(automatic.device)),
                       tr("CPU")};
    for (const DeviceInfo& d : devices) {
        if (!d.usable) continue;
        names.append(QStringLiteral("%1:%2").arg(qs(d.backend)).arg(d.index));
        labels.append(is_software_device(d) ? tr("%1 (%2, software: slower than the CPU backend)").arg(qs(d.name), qs(d.backend))
                                            : tr("%1 (%2)").arg(qs(d.name), qs(d.backend)));
    }
    if (!error.empty()) qCInfo(lcEngine) << "GPU devices:" << error.c_str();
    qCInfo(lcEngine) << "automatic device:" << automatic.backend.c_str() << "-" << automatic.reason.c_str();
    Q_EMIT backendsListed(names, labels);
}

void EngineWorker::loadModel(quint64 loadId, const QString& path, int threads, qint64 contextLength,
                             const QString& backend, const QString& projector) {
    const auto cancelled = [this, loadId] { return m_cancelLoadUpTo.load() >= loadId; };
    m_serverSession.reset();
    m_session.reset();
    m_model.reset();  // free the old model first: two large models rarely fit together
    QElapsedTimer sinceReport;
    sinceReport.start();
    double lastReported = -1;
    LoadOptions options;
    options.threads = threads;
    options.backend = backend.isEmpty() ? std::string("auto") : backend.toStdString();
    options.context = contextLength;
    options.progress = [&](double fraction) {
        if (fraction - lastReported >= 0.01 || sinceReport.elapsed() >= 100 || fraction >= 1.0) {
            lastReported = fraction;
            sinceReport.restart();
            Q_EMIT loadProgress(fraction);
        }
        return !cancelled();
    };
    // A standalone DFlash draft beside the model (the library pairs it the same way) drafts for it; one that does
    // not fit this model must not keep the model from loading.
    const QString draft = models::Library::draftBeside(path);
    if (!draft.isEmpty()) options.draft_file = draft.toStdString();
    options.mmproj = projectorToPair(projector, path);
    QString projectorProblem;
    try {
        if (cancelled()) throw LoadCancelled();
        // A companion (draft, projector) that cannot be used is dropped and the model loads without it.
        for (;;) {
            try {
                m_model = LoadedModel::load(path.toStdString(), options);
                break;
            } catch (const LoadCancelled&) {
                throw;
            } catch (const DeviceError&) {
                throw;
            } catch (const std::exception& e) {
                if (options.mmproj) {
                    qCWarning(lcEngine) << "the vision projector cannot be used:" << e.what();
                    projectorProblem = qs(e.what());
                    options.mmproj.reset();
                } else if (options.draft_file) {
                    qCWarning(lcEngine) << "the draft beside the model cannot be used:" << e.what();
                    options.draft_file.reset();
                } else {
                    throw;
                }
            }
        }
        if (cancelled()) throw LoadCancelled();
        ensureSession(contextLength);
    } catch (const LoadCancelled& e) {
        m_model.reset();
        m_session.reset();
        Q_EMIT loadFailed(qs(e.what()), true);
        return;
    } catch (const std::exception& e) {
        m_model.reset();
        m_session.reset();
        qCWarning(lcEngine) << "load failed:" << e.what();
        if (dynamic_cast<const DeviceError*>(&e)) Q_EMIT loadFailedOnDevice(qs(e.what()));
        Q_EMIT loadFailed(qs(e.what()), false);
        return;
    }

    const ModelInfo& info = m_model->info();
    const std::optional<std::string> source = chat::template_from_gguf(m_model->file());
    ModelStatus s;
    s.path = path;
    s.name = qs(info.name);
    s.architecture = qs(info.architecture);
    s.backend = qs(m_model->backend_name());
    const DeviceChoice& device = m_model->device_choice();
    s.device = qs(device.device);
    s.placement = qs(std::string(placement_name(device.placement)));
    s.deviceReason = qs(device.reason);
    s.deviceNotice = qs(device.notice);
    qCInfo(lcEngine) << "device:" << device.backend.c_str() << "-" << device.reason.c_str();
    s.speculation = m_model->speculation();
    s.contextLength = m_session->n_ctx();
    s.trainedContext = info.n_ctx_train;
    s.parameterCount = info.n_params;
    s.hasChatTemplate = m_model->chat_template() != nullptr;
    s.templateProblem = qs(m_model->chat_template_error());
    s.supportsThinking = templateMentions(source, "enable_thinking") || templateMentions(source, "<think>");
    s.supportsPreserveThinking = templateMentions(source, "preserve_thinking");
    s.supportsReasoningEffort = templateMentions(source, "reasoning_effort");
    if (const vision::Projector* p = m_model->projector()) s.visionProjector = qs(p->path());
    s.projectorProblem = projectorProblem;
    s.loadSeconds = m_model->load_seconds();
    m_status = s;
    Q_EMIT modelLoaded(s);
}

void EngineWorker::unloadModel() {
    m_serverSession.reset();
    m_session.reset();
    m_model.reset();
    Q_EMIT modelUnloaded();
}

void EngineWorker::runServerJob(const server::EngineJob& job) {
    if (m_model && !m_serverSession) {
        try {
            SessionOptions options;
            options.n_ctx = m_sessionContext > 0 ? m_sessionContext : options.n_ctx;
            m_serverSession = std::make_unique<Session>(m_model, options);
        } catch (const std::exception& e) {
            qCWarning(lcEngine) << "local server session:" << e.what();
        }
    }
    if (!m_serverSession) {
        job(nullptr);
        return;
    }
    server::EngineSlot slot{*m_model, *m_serverSession};
    job(&slot);
}

void EngineWorker::ensureSession(qint64 contextLength) {
    if (m_session && m_sessionContext == contextLength) return;
    m_session.reset();
    SessionOptions options;
    options.n_ctx = contextLength;
    m_session = std::make_unique<Session>(m_model, options);
    m_sessionContext = contextLength;
}

std::vector<vision::Image> EngineWorker::decodeImages(const TurnRequest& request) {
    std::vector<vision::Image> images;
    const vision::Projector* projector = m_model->projector();
    if (!projector) return images;
    for (const TurnImage& attached : request.images) {
        const auto* bytes = reinterpret_cast<const std::byte*>(attached.data.constData());
        vision::Image image =
            vision::decode_image({bytes, static_cast<size_t>(attached.data.size())}, attached.name.toStdString());
        const vision::ImageGrid grid = projector->grid(image);
        if (vision::downscaled_by_limits(image.height, image.width, projector->patch_size(), projector->merge(),
                                         projector->limits()))
            Q_EMIT imageNotice(request.id,
                               tr("%1 is %2 × %3 pixels: the model reads it downscaled to %4 × %5, its limit.")
                                   .arg(attached.name)
                                   .arg(image.width)
                                   .arg(image.height)
                                   .arg(grid.width)
                                   .arg(grid.height));
        images.push_back(std::move(image));
    }
    return images;
}

GenerationResult EngineWorker::generate(const TurnRequest& request, const StreamCallback& onChunk) {
    if (request.continueLastMessage)
        return m_session->continue_last_message(request.conversation, request.options, onChunk);
    const std::vector<vision::Image> images = decodeImages(request);
    if (images.empty()) return m_session->chat(request.conversation, request.options, onChunk);
    GenerationOptions options = request.options;
    options.on_image = [this, id = request.id](int done, int total) { Q_EMIT readingImage(id, done, total); };
    return m_session->chat(request.conversation, images, options, onChunk);
}

void EngineWorker::runTurn(const TurnRequest& request) {
    TurnOutcome outcome;
    outcome.id = request.id;
    Q_EMIT turnStarted(request.id);
    if (!m_model) {
        outcome.stopReason = QStringLiteral("error");
        outcome.error = QStringLiteral("no model is loaded");
        Q_EMIT turnFinished(outcome);
        return;
    }
    if (stopRequested(request.id)) {  // stopped while it waited in the queue
        outcome.stopReason = QString::fromLatin1(stop_reason_name(StopReason::cancelled));
        outcome.tokensAfterStop = 0;
        Q_EMIT turnFinished(outcome);
        return;
    }

    QElapsedTimer clock;
    clock.start();
    double firstText = -1;
    m_tokensSoFar.store(0);
    m_tokensAtStop.store(-1);
    const StreamCallback onChunk = [&](const StreamChunk& chunk) {
        if (firstText < 0) firstText = static_cast<double>(clock.nsecsElapsed()) * 1e-9;
        m_tokensSoFar.store(chunk.generated_tokens);
        if (m_stream->append(request.id, chunk.content, chunk.reasoning, chunk.generated_tokens))
            Q_EMIT streamReady();
        return !stopRequested(request.id);
    };
    GenerationResult result;
    try {
        ensureSession(request.contextLength);
        {
            std::lock_guard lock(m_sessionMutex);
            m_running = m_session.get();
            m_runningTurn = request.id;
        }
        if (stopRequested(request.id)) m_session->cancel();  // a stop between the checks above and here
        result = generate(request, onChunk);
        outcome.stopReason = QString::fromLatin1(stop_reason_name(result.stop_reason));
    } catch (const DeviceError& e) {
        // The device is gone: the model on it cannot run another step. Release it so the app can load again.
        outcome.stopReason = QStringLiteral("error");
        outcome.error = tr("The GPU failed: %1").arg(qs(e.what()));
        outcome.deviceFailed = true;
        qCWarning(lcEngine) << "turn" << request.id << "failed on the device:" << e.what();
    } catch (const std::exception& e) {
        outcome.stopReason = QStringLiteral("error");
        outcome.error = qs(e.what());
        qCWarning(lcEngine) << "turn" << request.id << "failed:" << e.what();
    }
    {
        std::lock_guard lock(m_sessionMutex);
        m_running = nullptr;
    }
    outcome.content = qs(result.content);
    outcome.reasoning = qs(result.reasoning);
    const GenerationStats& g = result.stats;
    outcome.stats.promptTokens = g.prompt_tokens;
    outcome.stats.reusedTokens = g.reused_tokens;
    outcome.stats.generatedTokens = g.generated_tokens;
    outcome.stats.imageTokens = g.image_tokens;
    outcome.stats.imageSeconds = g.image_seconds;
    outcome.stats.prefillSeconds = g.prefill_seconds;
    outcome.stats.decodeSeconds = g.decode_seconds;
    outcome.stats.tokensPerSecond = g.decode_tokens_per_second();
    outcome.stats.speculation = g.speculation;
    if (g.speculation != Speculation::none && g.drafted_tokens > 0) {
        outcome.stats.draftAcceptance = g.acceptance_rate();
        outcome.stats.meanAcceptedLength = g.mean_accepted_length();
    }
    outcome.stats.timeToFirstTokenSeconds = firstText;
    if (outcome.deviceFailed) {
        m_session.reset();
        m_model.reset();
    }
    if (m_session) {
        outcome.contextUsed = static_cast<qint64>(m_session->cached_tokens().size());
        outcome.contextLength = m_session->n_ctx();
    }
    const qint64 atStop = m_tokensAtStop.load();
    if (atStop >= 0) outcome.tokensAfterStop = std::max<qint64>(0, g.generated_tokens - atStop);
    Q_EMIT turnFinished(outcome);
}

}  // namespace ember::desktop
