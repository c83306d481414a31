// SPDX-License-Identifier: MIT
// The chat's C++ models: the streaming Markdown block splitter (streamed in any pieces it gives the blocks of a
// one-shot split, which CommonMark's fence rules decide), the blocks of a message (thinking folds when the answer
// starts; streaming changes only the last block), the branch tree of regenerate and edit, the conversation list,
// the prompt sent to the engine, the exports and the built-in highlighter.
#include <gtest/gtest.h>

#include "app_harness.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextDocument>

#include "chat/block_splitter.h"
#include "chat/conversation_export.h"
#include "chat/conversation_list_model.h"
#include "chat/conversation_tree.h"
#include "chat/message_block_model.h"
#include "chat/prompt_builder.h"
#include "settings/app_settings.h"
#include "ui/builtin_highlighter.h"

namespace ember::desktop {
namespace {

using Kind = TextBlock::Kind;

const QString kAnswer = QStringLiteral(
    "Here is a function:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\nCall `add(2, 3)` to get **5**.\n\n"
    "- one\n- two\n\n~~~~ js\nlet x = '```';\n~~~~\nThe end.");

QList<TextBlock> streamed(const QString& text, const QList<int>& cuts) {
    BlockSplitter s;
    int at = 0;
    for (const int cut : cuts) {
        s.append(QStringView(text).mid(at, cut - at));
        at = cut;
    }
    s.append(QStringView(text).mid(at));
    s.finish();
    return s.blocks();
}

TEST(BlockSplitter, SplitsTextAndFencedCode) {
    const QList<TextBlock> blocks = BlockSplitter::split(kAnswer);
    ASSERT_EQ(blocks.size(), 5);
    EXPECT_EQ(blocks[0].kind, Kind::Text);
    EXPECT_EQ(blocks[0].text.trimmed(), QStringLiteral("Here is a function:"));
    EXPECT_EQ(blocks[1].kind, Kind::Code);
    EXPECT_EQ(blocks[1].language, QStringLiteral("python"));
    EXPECT_EQ(blocks[1].text, QStringLiteral("def add(a, b):\n    return a + b"));
    EXPECT_EQ(blocks[2].kind, Kind::Text);
    EXPECT_TRUE(blocks[2].text.contains(QStringLiteral("**5**")));
    EXPECT_TRUE(blocks[2].text.contains(QStringLiteral("- two"))) << "a list after a blank line stays with its text";
    EXPECT_EQ(blocks[3].kind, Kind::Code);
    EXPECT_EQ(blocks[3].language, QStringLiteral("js"));
    EXPECT_EQ(blocks[3].text, QStringLiteral("let x = '```';")) << "a shorter fence inside ~~~~ does not close it";
    EXPECT_EQ(blocks[4].text.trimmed(), QStringLiteral("The end."));
    for (const TextBlock& b : blocks) EXPECT_TRUE(b.closed);
}

TEST(BlockSplitter, UnclosedFenceRunsToTheEnd) {
    const QList<TextBlock> blocks = BlockSplitter::split(QStringLiteral("Look:\n```cpp\nint main() {\n"));
    ASSERT_EQ(blocks.size(), 2);
    EXPECT_EQ(blocks[1].kind, Kind::Code);
    EXPECT_EQ(blocks[1].language, QStringLiteral("cpp"));
    EXPECT_EQ(blocks[1].text.trimmed(), QStringLiteral("int main() {"));
}

TEST(BlockSplitter, StreamingInAnyPiecesGivesTheOneShotBlocks) {
    const QList<TextBlock> whole = BlockSplitter::split(kAnswer);
    QList<int> everyChar;
    for (int i = 1; i < kAnswer.size(); ++i) everyChar.append(i);
    EXPECT_EQ(streamed(kAnswer, everyChar), whole);
    QRandomGenerator rng(7);
    for (int round = 0; round < 300; ++round) {
        QList<int> cuts;
        for (int i = 1; i < kAnswer.size(); ++i)
            if (rng.bounded(4) == 0) cuts.append(i);
        ASSERT_EQ(streamed(kAnswer, cuts), whole) << "round " << round;
    }
}

TEST(BlockSplitter, StreamingChangesOnlyTheLastBlockOrAppends) {
    BlockSplitter s;
    qsizetype count = 0;
    for (int i = 0; i < kAnswer.size(); ++i) {
        const BlockSplitter::Change c = s.append(QStringView(kAnswer).mid(i, 1));
        EXPECT_EQ(c.countBefore, count);
        EXPECT_GE(c.firstChanged, std::max<qsizetype>(0, count - 1)) << "an earlier block changed at " << i;
        count = s.count();
    }
}

MessageBlockModel* streamInto(MessageBlockModel& model, const QString& reasoning, const QString& answer) {
    ChatMessage m;
    m.role = QStringLiteral("assistant");
    m.state = QStringLiteral("streaming");
    model.reset(m, true);
    qint64 now = 1000;
    for (const QChar c : reasoning) model.appendReasoning(QString(c), now++);
    for (const QChar c : answer) model.appendContent(QString(c), now += 10);
    model.finish(now);
    return &model;
}

TEST(MessageBlockModel, ThinkingStreamsFirstAndFoldsWhenTheAnswerStarts) {
    MessageBlockModel model;
    ChatMessage m;
    model.reset(m, true);
    model.appendReasoning(QStringLiteral("Let me "), 1000);
    ASSERT_EQ(model.count(), 1);
    EXPECT_EQ(model.kindAt(0), QStringLiteral("thinking"));
    EXPECT_TRUE(model.thinkingExpanded()) << "the reasoning shows while the model thinks";
    EXPECT_FALSE(model.index(0).data(MessageBlockModel::ClosedRole).toBool());
    model.appendReasoning(QStringLiteral("think."), 1500);
    model.appendContent(QStringLiteral("Answer"), 2250);
    EXPECT_FALSE(model.thinkingExpanded());
    EXPECT_TRUE(model.index(0).data(MessageBlockModel::ClosedRole).toBool());
    EXPECT_EQ(model.thinkingMs(), 1250);
    EXPECT_EQ(model.textAt(0), QStringLiteral("Let me think."));
    EXPECT_EQ(model.kindAt(1), QStringLiteral("text"));
    model.setExpanded(0, true);
    EXPECT_TRUE(model.thinkingExpanded());
}

TEST(MessageBlockModel, StreamingNeverResetsTheModel) {
    MessageBlockModel model;
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    streamInto(model, QStringLiteral("hmm"), kAnswer);
    EXPECT_EQ(resets.count(), 1);  // the reset() that started the message, no other
    EXPECT_EQ(removed.count(), 0);
    for (const QList<QVariant>& args : changed) {
        const QModelIndex from = args[0].toModelIndex(), to = args[1].toModelIndex();
        EXPECT_GE(from.row(), to.row() - 1) << "a change spanned earlier blocks";
    }
    QStringList kinds;
    for (int i = 0; i < model.count(); ++i) kinds.append(model.kindAt(i));
    EXPECT_EQ(kinds, QStringList({"thinking", "text", "code", "text", "code", "text"}));
}

TEST(MessageBlockModel, StoredMessageWithImages) {
    ChatMessage m;
    m.role = QStringLiteral("user");
    m.content = QStringLiteral("What is in these?");
    m.attachments = {{QStringLiteral("a1"), QStringLiteral("cat.png"), QStringLiteral("image/png"), {}},
                     {QStringLiteral("a2"), QStringLiteral("dog.jpg"), QStringLiteral("image/jpeg"), {}}};
    MessageBlockModel model;
    model.reset(m);
    ASSERT_EQ(model.count(), 3);
    EXPECT_EQ(model.kindAt(0), QStringLiteral("image"));
    EXPECT_EQ(model.index(0).data(MessageBlockModel::ImageSourceRole).toString(), QStringLiteral("image://ember/a1"));
    EXPECT_EQ(model.index(1).data(MessageBlockModel::ImageNameRole).toString(), QStringLiteral("dog.jpg"));
    EXPECT_EQ(model.kindAt(2), QStringLiteral("text"));
}

ChatMessage msg(const QString& id, const QString& parent, const QString& role, qint64 created) {
    return {.id = id, .parentId = parent, .role = role, .content = id, .createdMs = created};
}

TEST(ConversationTree, RegenerateAndEditKeepOldBranchesReachable) {
    ConversationTree tree;
    tree.insert(msg("q1", "", "user", 1));
    tree.insert(msg("a1", "q1", "assistant", 2));
    tree.insert(msg("q2", "a1", "user", 3));
    tree.insert(msg("a2", "q2", "assistant", 4));
    tree.insert(msg("a2b", "q2", "assistant", 5));  // regenerated
    tree.insert(msg("q1b", "", "user", 6));         // the first question edited
    tree.setActiveLeaf("a2b");
    EXPECT_EQ(tree.path(), QStringList({"q1", "a1", "q2", "a2b"}));
    EXPECT_EQ(tree.siblings("a2b"), QStringList({"a2", "a2b"}));
    EXPECT_TRUE(tree.selectSibling("a2b", -1));
    EXPECT_EQ(tree.path(), QStringList({"q1", "a1", "q2", "a2"}));
    EXPECT_FALSE(tree.selectSibling("a2", -1));
    EXPECT_TRUE(tree.selectSibling("q1", 1));
    EXPECT_EQ(tree.path(), QStringList({"q1b"}));
    EXPECT_TRUE(tree.selectSibling("q1b", -1));
    EXPECT_EQ(tree.path().first(), QStringLiteral("q1"));
    EXPECT_EQ(tree.newestLeafUnder("q1"), QStringLiteral("a2b"));
    EXPECT_EQ(tree.all().size(), 6);
}

ConversationInfo conv(const QString& id, const QString& title, qint64 updated) {
    return {.id = id, .title = title, .createdMs = updated, .updatedMs = updated};
}

TEST(ConversationListModel, NewestFirstUpsertMovesToTopRemove) {
    ConversationListModel list;
    list.setConversations({conv("b", "Bees", 20), conv("a", "Ants", 10)}, {});
    ASSERT_EQ(list.count(), 2);
    EXPECT_EQ(list.titleAt(0), QStringLiteral("Bees"));
    list.upsert(conv("a", "Ants and more", 30));
    EXPECT_EQ(list.idAt(0), QStringLiteral("a"));
    EXPECT_EQ(list.titleAt(0), QStringLiteral("Ants and more"));
    EXPECT_EQ(list.count(), 2);
    list.upsert(conv("c", "Cats", 40));
    EXPECT_EQ(list.rowOf("c"), 0);
    list.remove("a");
    EXPECT_EQ(list.count(), 2);
    EXPECT_EQ(list.rowOf("a"), -1);
    EXPECT_EQ(list.index(1).data(ConversationListModel::TitleRole).toString(), QStringLiteral("Bees"));
}

TEST(PromptBuilder, ThinkingSwitchesAndPreservedReasoning) {
    ChatMessage q = msg("q", "", "user", 1), a = msg("a", "q", "assistant", 2), q2 = msg("q2", "a", "user", 3);
    a.reasoning = QStringLiteral("because");
    ChatMessage failed = msg("f", "q2", "assistant", 4);
    failed.content.clear();
    failed.state = QStringLiteral("failed");
    PromptOptions o;
    o.systemPrompt = QStringLiteral("Be brief.");
    o.supportsThinking = true;
    o.enableThinking = false;
    chat::RenderRequest r = buildRenderRequest({q, a, q2, failed}, o);
    ASSERT_EQ(r.messages.size(), 4u);  // system + 3; the empty failed answer is left out
    EXPECT_EQ(r.messages[0]["role"], "system");
    EXPECT_FALSE(r.messages[2].contains("reasoning_content"));
    EXPECT_EQ(r.kwargs["enable_thinking"], false);
    EXPECT_FALSE(r.kwargs.contains("preserve_thinking"));
    o.preserveThinking = true;
    o.systemPrompt.clear();
    r = buildRenderRequest({q, a, q2}, o);
    ASSERT_EQ(r.messages.size(), 3u);
    EXPECT_EQ(r.messages[1]["reasoning_content"], "because");
    EXPECT_EQ(r.kwargs["preserve_thinking"], true);
    o.supportsThinking = false;
    o.preserveThinking = false;
    r = buildRenderRequest({q}, o);
    EXPECT_FALSE(r.kwargs.contains("enable_thinking")) << "templates without thinking get no switch";
}

TEST(PromptBuilder, ReasoningEffortForTemplatesThatReadIt) {
    const ChatMessage q = msg("q", "", "user", 1);
    PromptOptions o;
    chat::RenderRequest r = buildRenderRequest({q}, o);
    EXPECT_FALSE(r.kwargs.contains("reasoning_effort")) << "templates without reasoning_effort get none";
    o.supportsReasoningEffort = true;
    o.reasoningEffort = QStringLiteral("high");
    r = buildRenderRequest({q}, o);
    EXPECT_EQ(r.kwargs["reasoning_effort"], "high");
    EXPECT_FALSE(r.kwargs.contains("enable_thinking"));
}

TEST(AppSettings, ReasoningEffortIsRememberedAndChecked) {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("settings.ini"));
    {
        AppSettings settings(file);
        EXPECT_EQ(settings.reasoningEffort(), QStringLiteral("medium"));
        settings.setReasoningEffort(QStringLiteral("extreme"));
        EXPECT_EQ(settings.reasoningEffort(), QStringLiteral("medium")) << "only low, medium or high";
        settings.setReasoningEffort(QStringLiteral("low"));
    }
    EXPECT_EQ(AppSettings(file).reasoningEffort(), QStringLiteral("low"));
}

TEST(PromptBuilder, EmptyStoppedOrInterruptedAnswersAreNotFedBack) {
    // Issue 20: an answer stopped (or cut by a crash) before it wrote anything came back as an empty assistant turn.
    for (const QString& state : {QStringLiteral("stopped"), QStringLiteral("interrupted"), QStringLiteral("failed")}) {
        ChatMessage q = msg("q", "", "user", 1), empty = msg("e", "q", "assistant", 2), q2 = msg("q2", "e", "user", 3);
        q.content = QStringLiteral("First question");
        q2.content = QStringLiteral("Second question");
        empty.content.clear();
        empty.reasoning = QStringLiteral("started thinking");
        empty.state = state;
        const chat::RenderRequest r = buildRenderRequest({q, empty, q2}, PromptOptions{});
        ASSERT_EQ(r.messages.size(), 1u) << state.toStdString() << ": " << r.messages.dump();
        EXPECT_EQ(r.messages[0]["role"], "user");
        EXPECT_EQ(r.messages[0]["content"], "First question\n\nSecond question") << "roles still alternate";
    }
    // A stopped answer with text is kept as it stands.
    ChatMessage q = msg("q", "", "user", 1), partial = msg("p", "q", "assistant", 2), q2 = msg("q2", "p", "user", 3);
    partial.content = QStringLiteral("Half an ans");
    partial.state = QStringLiteral("stopped");
    const chat::RenderRequest r = buildRenderRequest({q, partial, q2}, PromptOptions{});
    ASSERT_EQ(r.messages.size(), 3u);
    EXPECT_EQ(r.messages[1]["content"], "Half an ans");
}

TEST(PromptBuilder, ImagesGoAsContentPartsOnlyToAModelThatReadsThem) {
    ChatMessage q = msg("q", "", "user", 1), a = msg("a", "q", "assistant", 2), q2 = msg("q2", "a", "user", 3);
    q.content = QStringLiteral("What is in these?");
    q.attachments = {
        {QStringLiteral("i1"), QStringLiteral("cat.png"), QStringLiteral("image/png"), QByteArray("PNG1")},
        {QStringLiteral("i2"), QStringLiteral("dog.jpg"), QStringLiteral("image/jpeg"), QByteArray("JPG2")}};
    a.content = QStringLiteral("A cat and a dog.");
    q2.content.clear();
    q2.attachments = {
        {QStringLiteral("i3"), QStringLiteral("bird.png"), QStringLiteral("image/png"), QByteArray("PNG3")}};

    // Without a projector: text only, nothing collected.
    QList<TurnImage> images;
    chat::RenderRequest r = buildRenderRequest({q, a, q2}, PromptOptions{}, &images);
    EXPECT_EQ(r.messages[0]["content"], "What is in these?");
    EXPECT_TRUE(images.isEmpty());

    PromptOptions vision;
    vision.sendImages = true;
    r = buildRenderRequest({q, a, q2}, vision, &images);
    ASSERT_EQ(r.messages.size(), 3u) << r.messages.dump();
    const nlohmann::ordered_json parts = r.messages[0]["content"];
    ASSERT_TRUE(parts.is_array());
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_EQ(parts[0]["type"], "image");
    EXPECT_EQ(parts[1]["type"], "image");
    EXPECT_EQ(parts[2], nlohmann::ordered_json({{"type", "text"}, {"text", "What is in these?"}}));
    EXPECT_EQ(r.messages[2]["content"], nlohmann::ordered_json::array({{{"type", "image"}}})) << "an image alone";
    ASSERT_EQ(images.size(), 3);
    EXPECT_EQ(images[0].name, QStringLiteral("cat.png"));
    EXPECT_EQ(images[1].data, QByteArray("JPG2"));
    EXPECT_EQ(images[2].name, QStringLiteral("bird.png")) << "images in the order of their parts";

    // An unanswered question with images merged into the next one keeps every part in order.
    a.content.clear();
    a.state = QStringLiteral("failed");
    images.clear();
    r = buildRenderRequest({q, a, q2}, vision, &images);
    ASSERT_EQ(r.messages.size(), 1u) << r.messages.dump();
    ASSERT_EQ(r.messages[0]["content"].size(), 4u);
    EXPECT_EQ(r.messages[0]["content"][3]["type"], "image");
    EXPECT_EQ(images.size(), 3);
}

TEST(ConversationExport, MarkdownOfTheBranchJsonOfEverything) {
    ConversationInfo info = conv("c1", "Adding numbers", 5);
    ChatMessage q = msg("q", "", "user", 1), a = msg("a", "q", "assistant", 2), b = msg("b", "q", "assistant", 3);
    q.content = QStringLiteral("How do I add?");
    a.content = QStringLiteral("Use `+`.");
    a.reasoning = QStringLiteral("simple");
    const QString md = conversationToMarkdown(info, {q, a});
    EXPECT_TRUE(md.contains(QStringLiteral("# Adding numbers")));
    EXPECT_TRUE(md.contains(QStringLiteral("How do I add?")));
    EXPECT_TRUE(md.contains(QStringLiteral("Use `+`.")));
    EXPECT_FALSE(md.contains(QStringLiteral("\nb\n")));
    const QJsonObject json = QJsonDocument::fromJson(conversationToJson(info, {q, a, b})).object();
    EXPECT_EQ(json[QStringLiteral("title")].toString(), QStringLiteral("Adding numbers"));
    const QJsonArray messages = json[QStringLiteral("messages")].toArray();
    ASSERT_EQ(messages.size(), 3);
    EXPECT_EQ(messages[1].toObject()[QStringLiteral("reasoning")].toString(), QStringLiteral("simple"));
    EXPECT_EQ(messages[2].toObject()[QStringLiteral("parent_id")].toString(), QStringLiteral("q"));
}

TEST(BuiltinHighlighter, KnowsCommonLanguagesAndColoursKeywords) {
    for (const char* tag : {"python", "py", "cpp", "C++", "js", "typescript", "rust", "go", "bash", "json", "sql"})
        EXPECT_NE(languageRules(QString::fromLatin1(tag)), nullptr) << tag;
    EXPECT_EQ(languageRules(QStringLiteral("klingon")), nullptr);
    QTextDocument doc(QStringLiteral("def add(a, b):\n    return a + b  # sum\n"));
    BuiltinHighlighter highlighter(&doc, languageRules(QStringLiteral("python")), false);
    highlighter.rehighlight();
    const QList<QTextLayout::FormatRange> first = doc.firstBlock().layout()->formats();
    ASSERT_FALSE(first.isEmpty());
    EXPECT_EQ(first.first().start, 0) << "'def' is coloured";
    EXPECT_EQ(first.first().length, 3);
    const QList<QTextLayout::FormatRange> second = doc.firstBlock().next().layout()->formats();
    bool comment = false;
    for (const auto& r : second) comment |= r.start == 18 && r.length == 5;
    EXPECT_TRUE(comment) << "the comment is coloured";
}

TEST(AppSettings, PersistClampAndPerModelPresets) {
    QTemporaryDir dir;
    const QString ini = dir.filePath(QStringLiteral("settings.ini"));
    {
        AppSettings s(ini);
        EXPECT_EQ(s.backend(), QStringLiteral("auto")) << "the best device by default";
        s.setTemperature(0.2);
        s.setTopK(7);
        s.setMaxTokens(256);
        s.setContextLength(8192);
        s.setSystemPrompt(QStringLiteral("Be brief."));
        s.setBackend(QStringLiteral("vulkan:0"));
        s.setTemperature(9.0);  // clamped
        EXPECT_DOUBLE_EQ(s.temperature(), 2.0);
        s.setTemperature(0.2);
        s.saveModelPreset(QStringLiteral("/models/a/tiny.gguf"));
        s.setTemperature(1.1);
        s.setTopK(99);
        s.sync();
    }
    AppSettings s(ini);
    EXPECT_DOUBLE_EQ(s.temperature(), 1.1) << "settings survive a restart";
    EXPECT_EQ(s.topK(), 99);
    EXPECT_EQ(s.contextLength(), 8192);
    EXPECT_EQ(s.systemPrompt(), QStringLiteral("Be brief."));
    EXPECT_EQ(s.backend(), QStringLiteral("vulkan:0"));
    EXPECT_TRUE(s.hasModelPreset(QStringLiteral("/elsewhere/tiny.gguf"))) << "presets follow the file name";
    EXPECT_FALSE(s.hasModelPreset(QStringLiteral("/models/a/other.gguf")));
    EXPECT_TRUE(s.applyModelPreset(QStringLiteral("/models/a/tiny.gguf")));
    EXPECT_DOUBLE_EQ(s.temperature(), 0.2);
    EXPECT_EQ(s.topK(), 7);
    const GenerationOptions o = s.generationOptions();
    EXPECT_FLOAT_EQ(o.sampling.temperature, 0.2f);
    EXPECT_EQ(o.sampling.top_k, 7);
    EXPECT_EQ(o.max_tokens, 256);
    s.setMaxTokens(-5);
    EXPECT_EQ(s.generationOptions().max_tokens, -1) << "no limit";
    s.removeModelPreset(QStringLiteral("/models/a/tiny.gguf"));
    EXPECT_FALSE(s.hasModelPreset(QStringLiteral("/models/a/tiny.gguf")));
    s.applyPreset(QStringLiteral("Precise"));
    EXPECT_LT(s.temperature(), 0.5);
}

}  // namespace
}  // namespace ember::desktop
