// SPDX-License-Identifier: MIT
// The chat as the window drives it: the open conversation (a ConversationTree shown through MessageListModel),
// the conversation list, the composer's attachments, and the actions — send, stop, regenerate, edit and resend,
// continue, switch branch, copy, export, rename, delete, search. It builds each turn's prompt, streams the reply
// into the last message's blocks, saves every message as it completes and the message in flight periodically.
//
// Never blocks the GUI thread: the engine and the database are reached only through their asynchronous fronts,
// and files (images, exports) are read and written on worker threads.
#pragma once

#include <QObject>
#include <QTimer>
#include <QUrl>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include "attachment_list_model.h"
#include "conversation_list_model.h"
#include "conversation_tree.h"
#include "inference/engine_types.h"
#include "message_list_model.h"

namespace ember::desktop {

class AppSettings;
class ConversationStore;
class EngineController;
class ImageCache;
struct LoadedConversation;
struct PreparedImage;

class ChatController : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("The application creates the chat controller")
    Q_PROPERTY(ember::desktop::MessageListModel* messages READ messages CONSTANT)
    Q_PROPERTY(ember::desktop::ConversationListModel* conversations READ conversations CONSTANT)
    Q_PROPERTY(ember::desktop::AttachmentListModel* attachments READ attachments CONSTANT)
    Q_PROPERTY(QString conversationId READ conversationId NOTIFY conversationChanged)
    Q_PROPERTY(QString title READ title NOTIFY conversationChanged)
    Q_PROPERTY(bool thinkingEnabled READ thinkingEnabled WRITE setThinkingEnabled NOTIFY thinkingEnabledChanged)
    // The settings' reasoning effort, for models whose template reads one instead of a thinking switch.
    Q_PROPERTY(QString reasoningEffort READ reasoningEffort WRITE setReasoningEffort NOTIFY reasoningEffortChanged)
    Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
    Q_PROPERTY(bool loadingConversation READ loadingConversation NOTIFY loadingConversationChanged)
    Q_PROPERTY(QString notice READ notice NOTIFY noticeChanged)
    // What the answer in flight waits for before its first text ("Reading the image…"); empty otherwise.
    Q_PROPERTY(QString turnActivity READ turnActivity NOTIFY turnActivityChanged)
    Q_PROPERTY(QString searchText READ searchText WRITE setSearchText NOTIFY searchTextChanged)
    Q_PROPERTY(bool storageReady READ storageReady NOTIFY storageReadyChanged)
    // Why the history cannot be written (then new chats are kept only in memory); empty when it can.
    Q_PROPERTY(QString historyReadOnly READ historyReadOnly NOTIFY historyChanged)
    // Where a damaged history was moved, and what was recovered from it; empty unless that happened at startup.
    Q_PROPERTY(QString recoveredHistoryPath READ recoveredHistoryPath NOTIFY historyChanged)
    Q_PROPERTY(QString recoveredHistorySummary READ recoveredHistorySummary NOTIFY historyChanged)

public:
    ChatController(EngineController* engine, ConversationStore* store, AppSettings* settings, ImageCache* images,
                   QObject* parent = nullptr);
    ~ChatController() override;

    MessageListModel* messages() { return &m_messages; }
    ConversationListModel* conversations() { return &m_conversations; }
    AttachmentListModel* attachments() { return &m_attachments; }
    QString conversationId() const { return m_info.id; }
    QString title() const { return m_info.title; }
    bool thinkingEnabled() const { return m_info.thinkingEnabled; }
    void setThinkingEnabled(bool enabled);
    QString reasoningEffort() const;
    void setReasoningEffort(const QString& effort);
    bool generating() const { return m_turn.id != 0; }
    bool loadingConversation() const { return m_loadRequest != 0; }
    QString notice() const { return m_notice; }
    QString turnActivity() const { return m_turnActivity; }
    QString searchText() const { return m_searchText; }
    void setSearchText(const QString& text);
    bool storageReady() const { return m_storageReady; }
    QString historyReadOnly() const { return m_historyReadOnly; }
    QString recoveredHistoryPath() const { return m_recoveredPath; }
    QString recoveredHistorySummary() const { return m_recoveredSummary; }
    const ConversationTree& tree() const { return m_tree; }

    Q_INVOKABLE bool send(const QString& text);
    Q_INVOKABLE void stop();
    Q_INVOKABLE bool regenerate();
    Q_INVOKABLE bool continueLast();
    Q_INVOKABLE bool editAndResend(int row, const QString& text);
    Q_INVOKABLE void switchBranch(int row, int delta);
    Q_INVOKABLE void newConversation();
    Q_INVOKABLE void openConversation(const QString& id);
    Q_INVOKABLE void renameConversation(const QString& id, const QString& title);
    Q_INVOKABLE void deleteConversation(const QString& id);
    Q_INVOKABLE void attachFiles(const QVariantList& urls);  // file: URLs or paths; .gguf files go to ggufDropped
    Q_INVOKABLE void attachClipboardImage();
    Q_INVOKABLE bool clipboardHasImage() const;
    Q_INVOKABLE void removeAttachment(int row);
    Q_INVOKABLE QString messageText(int row) const;
    Q_INVOKABLE void copyText(const QString& text);
    Q_INVOKABLE void copyMessage(int row);
    Q_INVOKABLE bool copyLastAnswer();
    Q_INVOKABLE void exportConversation(const QUrl& file, const QString& format);  // "markdown" or "json"
    Q_INVOKABLE void clearNotice();
    Q_INVOKABLE void dismissRecoveredHistory();
    Q_INVOKABLE bool canRegenerate() const;
    Q_INVOKABLE bool canContinue() const;

Q_SIGNALS:
    void conversationChanged();
    void thinkingEnabledChanged();
    void reasoningEffortChanged();
    void generatingChanged();
    void loadingConversationChanged();
    void noticeChanged();
    void turnActivityChanged();
    void searchTextChanged();
    void storageReadyChanged();
    void historyChanged();
    void ggufDropped(const QString& path);
    void exported(const QString& path, const QString& error);
    // A reply ended (for tests and the status line): how, and how many tokens came after a stop request.
    void replyFinished(const QString& messageId, const QString& state, qint64 tokensAfterStop);
    void conversationOpened(const QString& id);

private:
    struct Turn {
        quint64 id = 0;
        QString conversationId;
        ChatMessage message;  // the reply in flight (its own copy: the shown conversation may change meanwhile)
        bool continuation = false;
        qsizetype contentBefore = 0;  // continuation: the text the message had before
    };

    bool ensureConversation(const QString& firstText);
    bool startReply(const QString& parentId, bool continuation = false);
    QList<ChatMessage> branchUpTo(const QString& id) const;
    void onStreamed(quint64 turnId, const QString& content, const QString& reasoning);
    void onTurnFinished(const TurnOutcome& outcome);
    void onLoaded(quint64 request, const LoadedConversation& conversation);
    void savePartial();
    void saveConversationInfo();
    void touchConversation();
    void setNotice(const QString& notice);
    void setTurnActivity(const QString& activity);
    void addPreparedImage(const PreparedImage& image);
    QString lastAssistantId() const;

    EngineController* m_engine;
    ConversationStore* m_store;
    AppSettings* m_settings;
    ImageCache* m_images;
    MessageListModel m_messages;
    ConversationListModel m_conversations;
    AttachmentListModel m_attachments;
    ConversationTree m_tree;
    ConversationInfo m_info;
    bool m_infoSaved = false;  // the conversation exists in the database
    Turn m_turn;
    QTimer m_partialSave;
    quint64 m_loadRequest = 0;
    quint64 m_listRequest = 0;
    QString m_notice;
    QString m_turnActivity;
    QString m_searchText;
    bool m_storageReady = false;
    QString m_historyReadOnly;
    QString m_recoveredPath;
    QString m_recoveredSummary;
};

}  // namespace ember::desktop
