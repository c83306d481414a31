// SPDX-License-Identifier: MIT
#include "chat_controller.h"

#include <QClipboard>
#include <QDateTime>
#include <QFileInfo>
#include <QFuture>
#include <QGuiApplication>
#include <QLoggingCategory>
#include <QMimeData>
#include <QUuid>
#include <QtConcurrent/QtConcurrentRun>

#include "conversation_export.h"
#include "inference/engine_controller.h"
#include "image_cache.h"
#include "prompt_builder.h"
#include "settings/app_settings.h"
#include "storage/conversation_store.h"
#include "ui/assign_if_changed.h"

namespace ember::desktop {

Q_LOGGING_CATEGORY(lcChat, "ember.desktop.chat")

namespace {

qint64 nowMs() {
    return QDateTime::currentMSecsSinceEpoch();
}

QString newId() {
    return QUuid::createUuid().toString(QUuid::WithoutBraces);
}

QString titleFrom(const QString& text) {
    QString line = text.trimmed().section(QLatin1Char('\n'), 0, 0).simplified();
    if (line.size() > 48) line = line.left(47).trimmed() + QChar(0x2026);
    return line.isEmpty() ? QStringLiteral("New chat") : line;
}

int partialSaveInterval() {
    bool ok = false;
    const int fromEnv = qEnvironmentVariableIntValue("EMBER_PARTIAL_SAVE_MS", &ok);
    return ok && fromEnv > 0 ? fromEnv : 1000;
}

QString localPath(const QVariant& v) {
    const QUrl url = v.toUrl();
    return url.isLocalFile() ? url.toLocalFile() : v.toString();
}

}  // namespace

ChatController::ChatController(EngineController* engine, ConversationStore* store, AppSettings* settings,
                               ImageCache* images, QObject* parent)
    : QObject(parent), m_engine(engine), m_store(store), m_settings(settings), m_images(images) {
    m_info.thinkingEnabled = m_settings->thinkingByDefault();
    m_partialSave.setInterval(partialSaveInterval());
    connect(&m_partialSave, &QTimer::timeout, this, &ChatController::savePartial);
    connect(m_engine, &EngineController::streamed, this,
            [this](quint64 turn, const QString& content, const QString& reasoning, qint64) {
                onStreamed(turn, content, reasoning);
            });
    connect(m_engine, &EngineController::turnFinished, this, &ChatController::onTurnFinished);
    connect(m_engine, &EngineController::readingImage, this, [this](quint64 turn, int done, int total) {
        if (turn != m_turn.id) return;
        setTurnActivity(total > 1 ? tr("Reading image %1 of %2…").arg(done + 1).arg(total) : tr("Reading the image…"));
    });
    connect(m_engine, &EngineController::imageNotice, this, [this](quint64 turn, const QString& notice) {
        if (turn == m_turn.id) setNotice(notice);
    });
    connect(m_store, &ConversationStore::loaded, this, &ChatController::onLoaded);
    connect(m_store, &ConversationStore::listed, this,
            [this](quint64 request, const QList<ConversationInfo>& list) {
                if (request != m_listRequest) return;  // an older search answered late
                m_conversations.setConversations(list, m_searchText.trimmed());
            });
    connect(m_store, &ConversationStore::readOnly, this, [this](const QString& reason) {
        m_historyReadOnly = reason;
        Q_EMIT historyChanged();
    });
    connect(m_store, &ConversationStore::recovered, this, [this](const QString& movedTo, const QString& summary) {
        m_recoveredPath = movedTo;
        m_recoveredSummary = summary;
        Q_EMIT historyChanged();
    });
    connect(m_store, &ConversationStore::opened, this, [this](bool ok, const QString& error) {
        m_storageReady = ok;
        Q_EMIT storageReadyChanged();
        if (!ok) setNotice(error);
        m_listRequest = m_store->listConversations(m_searchText);
    });
    connect(m_store, &ConversationStore::failed, this, &ChatController::setNotice);
}

ChatController::~ChatController() {
    // A reply in flight is saved as it stands; the store finishes its queue before it closes.
    if (m_turn.id != 0) {
        m_turn.message.state = message_state::stopped;
        m_store->saveMessage(m_turn.conversationId, m_turn.message);
    }
}

void ChatController::setNotice(const QString& notice) {
    if (!assignIfChanged(m_notice, notice)) return;
    Q_EMIT noticeChanged();
}

void ChatController::setTurnActivity(const QString& activity) {
    if (!assignIfChanged(m_turnActivity, activity)) return;
    Q_EMIT turnActivityChanged();
}

void ChatController::clearNotice() {
    setNotice({});
}

void ChatController::dismissRecoveredHistory() {
    m_recoveredPath.clear();
    m_recoveredSummary.clear();
    Q_EMIT historyChanged();
}

void ChatController::setThinkingEnabled(bool enabled) {
    if (m_info.thinkingEnabled == enabled) return;
    m_info.thinkingEnabled = enabled;
    if (m_infoSaved) saveConversationInfo();
    Q_EMIT thinkingEnabledChanged();
}

QString ChatController::reasoningEffort() const {
    return m_settings->reasoningEffort();
}

void ChatController::setReasoningEffort(const QString& effort) {
    if (effort == m_settings->reasoningEffort()) return;
    m_settings->setReasoningEffort(effort);
    Q_EMIT reasoningEffortChanged();
}

void ChatController::setSearchText(const QString& text) {
    if (!assignIfChanged(m_searchText, text)) return;
    Q_EMIT searchTextChanged();
    m_listRequest = m_store->listConversations(text);
}

void ChatController::saveConversationInfo() {
    m_info.activeLeaf = m_tree.activeLeaf();
    m_store->saveConversation(m_info);
    m_infoSaved = true;
}

void ChatController::touchConversation() {
    m_info.updatedMs = nowMs();
    saveConversationInfo();
    m_conversations.upsert(m_info);
}

bool ChatController::ensureConversation(const QString& firstText) {
    if (!m_info.id.isEmpty()) return true;
    m_info.id = newId();
    m_info.title = titleFrom(firstText);
    m_info.createdMs = m_info.updatedMs = nowMs();
    saveConversationInfo();
    m_conversations.upsert(m_info);
    Q_EMIT conversationChanged();
    return true;
}

bool ChatController::send(const QString& text) {
    const QString trimmed = text.trimmed();
    if (generating() || (trimmed.isEmpty() && m_attachments.count() == 0)) return false;
    if (m_engine->state() != EngineController::Ready && m_engine->state() != EngineController::Loading) {
        setNotice(QStringLiteral("Load a model first: open one from the library or the catalog."));
        return false;
    }
    ensureConversation(trimmed.isEmpty() ? QStringLiteral("Image") : trimmed);
    ChatMessage user;
    user.id = newId();
    user.parentId = m_tree.activeLeaf();
    user.role = QStringLiteral("user");
    user.content = text;
    user.createdMs = nowMs();
    user.attachments = m_attachments.takeAll();
    m_tree.insert(user);
    m_tree.setActiveLeaf(user.id);
    m_store->saveMessage(m_info.id, user);
    return startReply(user.id);
}

QList<ChatMessage> ChatController::branchUpTo(const QString& id) const {
    QList<ChatMessage> branch;
    for (const QString& step : m_tree.path()) {
        if (const ChatMessage* m = m_tree.message(step)) branch.append(*m);
        if (step == id) break;
    }
    return branch;
}

bool ChatController::startReply(const QString& parentId, bool continuation) {
    TurnRequest request;
    request.contextLength = m_settings->contextLength();
    request.options = m_settings->generationOptions();
    PromptOptions prompt;
    prompt.systemPrompt = m_settings->systemPrompt();
    prompt.supportsThinking = m_engine->supportsThinking();
    prompt.enableThinking = m_info.thinkingEnabled;
    prompt.preserveThinking = m_engine->supportsPreserveThinking();
    prompt.supportsReasoningEffort = m_engine->supportsReasoningEffort();
    prompt.reasoningEffort = m_settings->reasoningEffort();
    // A continuation is plain text after the conversation: its images are not read again.
    prompt.sendImages = m_engine->canSeeImages() && !continuation;

    Turn turn;
    turn.conversationId = m_info.id;
    turn.continuation = continuation;
    if (continuation) {
        const ChatMessage* existing = m_tree.message(parentId);
        if (!existing) return false;
        turn.message = *existing;
        turn.contentBefore = existing->content.size();
        request.continueLastMessage = true;
        request.conversation = buildRenderRequest(branchUpTo(parentId), prompt);
    } else {
        request.conversation = buildRenderRequest(branchUpTo(parentId), prompt, &request.images);
        turn.message.id = newId();
        turn.message.parentId = parentId;
        turn.message.role = QStringLiteral("assistant");
        turn.message.createdMs = nowMs();
        turn.message.model = m_engine->modelName();
    }
    turn.message.state = message_state::streaming;
    turn.message.error.clear();
    m_tree.insert(turn.message);
    m_tree.setActiveLeaf(turn.message.id);
    m_messages.sync(m_tree, turn.message.id);
    if (continuation) {
        m_messages.refresh(m_tree, turn.message.id);
        if (MessageBlockModel* blocks = m_messages.blocks(turn.message.id)) blocks->reset(turn.message, true);
    }
    // The reply exists on disk from its first moment, so that a crash leaves it visible as interrupted.
    m_store->saveMessage(m_info.id, turn.message);
    touchConversation();

    turn.id = m_engine->startTurn(std::move(request));
    m_turn = turn;
    m_partialSave.start();
    Q_EMIT generatingChanged();
    return true;
}

void ChatController::onStreamed(quint64 turnId, const QString& content, const QString& reasoning) {
    if (turnId != m_turn.id) return;
    setTurnActivity({});
    const qint64 now = nowMs();
    m_turn.message.reasoning += reasoning;
    m_turn.message.content += content;
    if (m_turn.conversationId != m_info.id) return;  // the window shows another conversation now
    if (ChatMessage* m = m_tree.message(m_turn.message.id)) {
        m->reasoning = m_turn.message.reasoning;
        m->content = m_turn.message.content;
    }
    if (MessageBlockModel* blocks = m_messages.blocks(m_turn.message.id)) {
        blocks->appendReasoning(reasoning, now);
        blocks->appendContent(content, now);
    }
}

void ChatController::onTurnFinished(const TurnOutcome& outcome) {
    if (outcome.id != m_turn.id) return;
    setTurnActivity({});
    m_partialSave.stop();
    const qint64 now = nowMs();
    ChatMessage& m = m_turn.message;
    if (outcome.stopReason == QLatin1String("error")) {
        m.state = message_state::failed;
        m.error = outcome.error;
    } else if (outcome.stopReason == QLatin1String("cancelled")) {
        m.state = message_state::stopped;
    } else {
        m.state = message_state::complete;
        if (outcome.stopReason == QLatin1String("context_full"))
            m.error = QStringLiteral("The context is full: start a new chat or allow a longer context in Settings.");
    }
    m.stats = outcome.stats.toVariantMap();
    m.stats.insert(QStringLiteral("stopReason"), outcome.stopReason);
    const bool shown = m_turn.conversationId == m_info.id;
    MessageBlockModel* blocks = shown ? m_messages.blocks(m.id) : nullptr;
    if (blocks) {
        blocks->finish(now);
        if (!m.reasoning.isEmpty()) m.thinkingMs = blocks->thinkingMs();
    }
    if (shown && m_tree.contains(m.id)) {
        *m_tree.message(m.id) = m;
        m_messages.refresh(m_tree, m.id);
    }
    m_store->saveMessage(m_turn.conversationId, m);
    if (shown) touchConversation();
    const QString id = m.id;
    const QString state = m.state;
    m_turn = Turn();
    Q_EMIT generatingChanged();
    Q_EMIT replyFinished(id, state, outcome.tokensAfterStop);
}

void ChatController::savePartial() {
    if (m_turn.id == 0) return;
    m_store->saveMessage(m_turn.conversationId, m_turn.message);
}

void ChatController::stop() {
    m_engine->stop();
}

QString ChatController::lastAssistantId() const {
    const QStringList path = m_tree.path();
    if (path.isEmpty()) return {};
    const ChatMessage* last = m_tree.message(path.last());
    return last && last->role == QLatin1String("assistant") ? last->id : QString();
}

bool ChatController::canRegenerate() const {
    return !generating() && !m_tree.path().isEmpty();
}

bool ChatController::canContinue() const {
    const QString id = lastAssistantId();
    return !generating() && !id.isEmpty() && !m_tree.message(id)->content.isEmpty();
}

bool ChatController::regenerate() {
    if (!canRegenerate()) return false;
    const QStringList path = m_tree.path();
    const ChatMessage* last = m_tree.message(path.last());
    // A new sibling of the last answer (the old one stays reachable), or the missing answer to a question.
    return startReply(last->role == QLatin1String("assistant") ? last->parentId : last->id);
}

bool ChatController::continueLast() {
    if (!canContinue()) return false;
    return startReply(lastAssistantId(), true);
}

bool ChatController::editAndResend(int row, const QString& text) {
    const ChatMessage* old = m_tree.message(m_messages.idAt(row));
    if (generating() || !old || old->role != QLatin1String("user") || text.trimmed().isEmpty()) return false;
    ChatMessage edited;
    edited.id = newId();
    edited.parentId = old->parentId;
    edited.role = old->role;
    edited.content = text;
    edited.createdMs = nowMs();
    for (Attachment a : old->attachments) {  // the same images, stored again under the new message
        const QString oldId = a.id;
        a.id = newId();
        m_images->insert(a.id, m_images->image(oldId));
        edited.attachments.append(a);
    }
    m_tree.insert(edited);
    m_tree.setActiveLeaf(edited.id);
    m_store->saveMessage(m_info.id, edited);
    return startReply(edited.id);
}

void ChatController::switchBranch(int row, int delta) {
    if (generating()) return;
    if (!m_tree.selectSibling(m_messages.idAt(row), delta)) return;
    m_messages.sync(m_tree);
    saveConversationInfo();
}

void ChatController::newConversation() {
    stop();
    m_tree.clear();
    m_messages.clear();
    m_info = ConversationInfo();
    m_info.thinkingEnabled = m_settings->thinkingByDefault();
    m_infoSaved = false;
    m_loadRequest = 0;
    Q_EMIT loadingConversationChanged();
    Q_EMIT conversationChanged();
    Q_EMIT thinkingEnabledChanged();
}

void ChatController::openConversation(const QString& id) {
    if (id.isEmpty() || id == m_info.id) return;
    stop();
    m_loadRequest = m_store->loadConversation(id);
    Q_EMIT loadingConversationChanged();
}

void ChatController::onLoaded(quint64 request, const LoadedConversation& conversation) {
    if (request != m_loadRequest) return;
    m_loadRequest = 0;
    Q_EMIT loadingConversationChanged();
    if (!conversation.found) {
        setNotice(QStringLiteral("That conversation is no longer stored."));
        return;
    }
    for (auto it = conversation.thumbnails.constBegin(); it != conversation.thumbnails.constEnd(); ++it)
        m_images->insert(it.key(), it.value());
    m_tree.clear();
    for (ChatMessage m : conversation.messages) {
        // A reply still marked as streaming was cut off when the app closed or crashed.
        if (m.state == message_state::streaming && m.id != m_turn.message.id) m.state = message_state::interrupted;
        m_tree.insert(m);
    }
    m_info = conversation.info;
    m_infoSaved = true;
    QString leaf = m_info.activeLeaf;
    if (!m_tree.contains(leaf)) {
        const QList<ChatMessage> all = m_tree.all();
        leaf = all.isEmpty() ? QString() : m_tree.newestLeafUnder(all.first().id);
    }
    m_tree.setActiveLeaf(leaf);
    m_messages.clear();
    m_messages.sync(m_tree);
    Q_EMIT conversationChanged();
    Q_EMIT thinkingEnabledChanged();
    Q_EMIT conversationOpened(m_info.id);
}

void ChatController::renameConversation(const QString& id, const QString& title) {
    const QString clean = title.simplified();
    if (clean.isEmpty()) return;
    const int row = m_conversations.rowOf(id);
    ConversationInfo info = id == m_info.id || row < 0 ? m_info : m_conversations.conversations()[row];
    if (info.id != id) return;
    info.title = clean;
    m_store->saveConversation(info);
    m_conversations.upsert(info);
    if (id == m_info.id) {
        m_info.title = clean;
        Q_EMIT conversationChanged();
    }
}

void ChatController::deleteConversation(const QString& id) {
    if (id == m_info.id) newConversation();
    m_store->deleteConversation(id);
    m_conversations.remove(id);
}

void ChatController::attachFiles(const QVariantList& urls) {
    for (const QVariant& v : urls) {
        const QString path = localPath(v);
        if (path.isEmpty()) continue;
        if (QFileInfo(path).suffix().compare(QStringLiteral("gguf"), Qt::CaseInsensitive) == 0) {
            Q_EMIT ggufDropped(path);
            continue;
        }
        QtConcurrent::run(prepareImageFile, path).then(this, [this](const PreparedImage& image) {
            addPreparedImage(image);
        });
    }
}

bool ChatController::clipboardHasImage() const {
    const QMimeData* mime = QGuiApplication::clipboard()->mimeData();
    return mime && mime->hasImage();
}

void ChatController::attachClipboardImage() {
    const QImage image = QGuiApplication::clipboard()->image();  // the clipboard must be read on the GUI thread
    if (image.isNull()) return;
    const QString name = QStringLiteral("pasted-%1.png").arg(QDateTime::currentDateTime().toString(
        QStringLiteral("yyyyMMdd-HHmmss")));
    QtConcurrent::run([image, name] { return prepareImage(image, name); })
        .then(this, [this](const PreparedImage& prepared) { addPreparedImage(prepared); });
}

void ChatController::addPreparedImage(const PreparedImage& image) {
    if (!image.error.isEmpty()) {
        setNotice(image.error);
        return;
    }
    Attachment a;
    a.id = newId();
    a.name = image.name;
    a.mimeType = image.mimeType;
    a.data = image.data;
    m_images->insert(a.id, image.thumbnail);
    m_attachments.add(a);
}

void ChatController::removeAttachment(int row) {
    m_attachments.remove(row);
}

QString ChatController::messageText(int row) const {
    const ChatMessage* m = m_tree.message(m_messages.idAt(row));
    return m ? m->content : QString();
}

void ChatController::copyText(const QString& text) {
    QGuiApplication::clipboard()->setText(text);
}

void ChatController::copyMessage(int row) {
    copyText(messageText(row));
}

bool ChatController::copyLastAnswer() {
    const QString id = lastAssistantId();
    if (id.isEmpty()) return false;
    copyText(m_tree.message(id)->content);
    return true;
}

void ChatController::exportConversation(const QUrl& file, const QString& format) {
    const QString path = file.isLocalFile() ? file.toLocalFile() : file.toString();
    if (path.isEmpty() || m_info.id.isEmpty()) return;
    const bool json = format == QLatin1String("json");
    const ConversationInfo info = m_info;
    QList<ChatMessage> messages;
    if (json) {
        messages = m_tree.all();
    } else {
        for (const QString& id : m_tree.path()) messages.append(*m_tree.message(id));
    }
    QtConcurrent::run([path, json, info, messages] {
        const QByteArray bytes =
            json ? conversationToJson(info, messages) : conversationToMarkdown(info, messages).toUtf8();
        return writeExport(path, bytes);
    }).then(this, [this, path](const QString& error) {
        setNotice(error.isEmpty() ? QStringLiteral("Exported to ") + path : error);
        Q_EMIT exported(path, error);
    });
}

}  // namespace ember::desktop
