// SPDX-License-Identifier: MIT
// Values passed between the GUI thread and the engine worker thread (by queued signals, hence copyable and
// registered as metatypes).
#pragma once

#include <QByteArray>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QVariantMap>

#include "ember/chat.h"
#include "ember/runtime.h"

namespace ember::desktop {

// The engine's word for a speculation method ("none", "mtp", "dflash"), where the app hands it to QML or JSON.
QString speculationName(Speculation method);

// What the GUI shows about the loaded model.
struct ModelStatus {
    QString path;
    QString name;
    QString architecture;
    QString backend;             // the backend's own description, e.g. "cpu (avx2, 2 threads)"
    QString device;              // the device it runs on, e.g. "NVIDIA H200" or "cpu (avx2, 2 threads)"
    QString placement;           // "cpu", "gpu" or "gpu + host experts"
    QString deviceReason;        // why that device (one line)
    QString deviceNotice;        // for the user, when the model could not go wholly on the GPU
    Speculation speculation = Speculation::none;  // how answers are drafted
    qint64 contextLength = 0;    // the session's positions
    qint64 trainedContext = 0;   // the model's training context
    quint64 parameterCount = 0;
    bool hasChatTemplate = false;
    QString templateProblem;     // why the file's template cannot be used
    bool supportsThinking = false;          // the template reads enable_thinking or writes <think>
    bool supportsPreserveThinking = false;  // the template can write past reasoning back (preserve_thinking)
    bool supportsReasoningEffort = false;   // the template reads reasoning_effort (low / medium / high: gpt-oss)
    QString visionProjector;                // the paired projector file the model reads images with (empty: none)
    QString projectorProblem;               // why a projector paired with the model could not be used
    double loadSeconds = 0;
};

// An image of a turn, as attached (the file's bytes), in the order of its placeholder in the conversation.
struct TurnImage {
    QString name;
    QByteArray data;
};

// One turn for the worker: the conversation to render and how to generate.
struct TurnRequest {
    quint64 id = 0;
    chat::RenderRequest conversation;
    QList<TurnImage> images;  // sent to the model only when it has a projector (the conversation then has parts)
    GenerationOptions options;
    qint64 contextLength = 4096;
    // Extend the last (assistant) message instead of starting a reply: the prompt is the rendered conversation cut
    // right after that message's text, as Hugging Face's continue_final_message does.
    bool continueLastMessage = false;
};

struct TurnStats {
    qint64 promptTokens = 0;
    qint64 reusedTokens = 0;
    qint64 generatedTokens = 0;
    qint64 imageTokens = 0;   // prompt tokens that are image embeddings
    double imageSeconds = 0;  // encoding the turn's images
    double prefillSeconds = 0;
    double decodeSeconds = 0;
    double timeToFirstTokenSeconds = -1;  // from the start of the turn to its first streamed text
    double tokensPerSecond = 0;           // decode speed
    Speculation speculation = Speculation::none;
    double draftAcceptance = -1;          // accepted / proposed draft tokens; < 0 without speculative decoding
    double meanAcceptedLength = 0;        // tokens committed per draft-and-verify step

    // For QML and the stored message (its JSON): the speculation method as its word (speculation_name).
    QVariantMap toVariantMap() const;
};

struct TurnOutcome {
    quint64 id = 0;
    QString stopReason;  // ember::stop_reason_name, or "error"
    QString error;       // one line, when the turn failed
    QString content;     // all text of this turn (continuations: only the new text)
    QString reasoning;
    TurnStats stats;
    qint64 contextUsed = 0;    // positions the session holds after the turn
    qint64 contextLength = 0;
    // Tokens the engine produced after it saw the stop request (at most one when stop works); -1 without a stop.
    qint64 tokensAfterStop = -1;
    // The GPU failed during the turn (device lost, out of device memory): the worker released the model.
    bool deviceFailed = false;
};

}  // namespace ember::desktop

Q_DECLARE_METATYPE(ember::desktop::ModelStatus)
Q_DECLARE_METATYPE(ember::desktop::TurnRequest)
Q_DECLARE_METATYPE(ember::desktop::TurnOutcome)
