// SPDX-License-Identifier: MIT
// Conversation storage: the versioned schema migrations (fresh files, every older version with data in it, a
// failing step rolled back, a newer file refused untouched), WAL, and the storage worker's save / list / search /
// load / delete round trip with images.
#include <gtest/gtest.h>

#include "app_harness.h"

#include <QBuffer>
#include <QImage>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QUuid>

#include "storage/schema.h"
#include "storage/storage_worker.h"

namespace ember::desktop {
namespace {

// A raw connection for the schema tests, closed and removed with the object.
struct Db {
    explicit Db(const QString& path) : name(QUuid::createUuid().toString()) {
        QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        d.setDatabaseName(path);
        d.open();
    }
    ~Db() {
        { QSqlDatabase::database(name).close(); }
        QSqlDatabase::removeDatabase(name);
    }
    QSqlDatabase db() const { return QSqlDatabase::database(name); }
    QVariant scalar(const QString& sql) const {
        QSqlQuery q(db());
        if (!q.exec(sql) || !q.next()) return {};
        return q.value(0);
    }
    bool exec(const QString& sql) const { return QSqlQuery(db()).exec(sql); }
    QString name;
};

TEST(Schema, FreshFileMigratesToTheLatestVersionInWal) {
    QTemporaryDir dir;
    Db d(dir.filePath(QStringLiteral("c.sqlite")));
    QSqlDatabase db = d.db();
    QString error;
    ASSERT_TRUE(schema::configure(db, &error)) << error.toStdString();
    ASSERT_TRUE(schema::migrate(db, &error)) << error.toStdString();
    EXPECT_EQ(schema::version(db), schema::kSchemaVersion);
    EXPECT_EQ(d.scalar(QStringLiteral("PRAGMA journal_mode")).toString(), QStringLiteral("wal"));
    EXPECT_EQ(d.scalar(QStringLiteral("PRAGMA foreign_keys")).toInt(), 1);
    ASSERT_TRUE(schema::migrate(db, &error)) << "migrating an up-to-date file is a no-op";
    EXPECT_EQ(schema::version(db), schema::kSchemaVersion);
}

// Every older version, with data written in that version's shape, reaches the latest with the data intact and the
// new columns at their defaults.
TEST(Schema, EveryOlderVersionMigratesWithItsData) {
    for (int from = 1; from < schema::kSchemaVersion; ++from) {
        QTemporaryDir dir;
        Db d(dir.filePath(QStringLiteral("c.sqlite")));
        QSqlDatabase db = d.db();
        QString error;
        ASSERT_TRUE(schema::migrate(db, &error, from)) << error.toStdString();
        ASSERT_EQ(schema::version(db), from);
        ASSERT_TRUE(d.exec(QStringLiteral("INSERT INTO conversations (id, title, created_at, updated_at) "
                                          "VALUES ('c', 'Old chat', 1, 2)")));
        ASSERT_TRUE(d.exec(QStringLiteral("INSERT INTO messages (id, conversation_id, parent_id, role, content, "
                                          "reasoning, state, created_at) VALUES ('m', 'c', NULL, 'user', 'hello', '', "
                                          "'complete', 3)")));
        ASSERT_TRUE(schema::migrate(db, &error)) << "from " << from << ": " << error.toStdString();
        EXPECT_EQ(schema::version(db), schema::kSchemaVersion);
        EXPECT_EQ(d.scalar(QStringLiteral("SELECT title FROM conversations WHERE id = 'c'")).toString(),
                  QStringLiteral("Old chat"));
        EXPECT_EQ(d.scalar(QStringLiteral("SELECT thinking_enabled FROM conversations")).toInt(), 1);
        EXPECT_EQ(d.scalar(QStringLiteral("SELECT content FROM messages WHERE id = 'm'")).toString(),
                  QStringLiteral("hello"));
        EXPECT_EQ(d.scalar(QStringLiteral("SELECT stats FROM messages")).toString(), QStringLiteral("{}"));
        EXPECT_EQ(d.scalar(QStringLiteral("SELECT error FROM messages")).toString(), QString(""));
    }
}

TEST(Schema, FailingStepIsRolledBack) {
    QTemporaryDir dir;
    Db d(dir.filePath(QStringLiteral("c.sqlite")));
    QSqlDatabase db = d.db();
    QString error;
    ASSERT_TRUE(schema::migrate(db, &error, 1));
    ASSERT_TRUE(d.exec(QStringLiteral("CREATE TABLE attachments (x INTEGER)")));  // step 2 creates it too
    EXPECT_FALSE(schema::migrate(db, &error));
    EXPECT_TRUE(error.contains(QStringLiteral("migration to schema version 2 failed"))) << error.toStdString();
    EXPECT_EQ(schema::version(db), 1);
    // The step's earlier statements were undone with it.
    EXPECT_FALSE(d.exec(QStringLiteral("SELECT thinking_enabled FROM conversations")));
}

TEST(Schema, NewerFileIsRefusedUntouched) {
    QTemporaryDir dir;
    Db d(dir.filePath(QStringLiteral("c.sqlite")));
    QSqlDatabase db = d.db();
    ASSERT_TRUE(d.exec(QStringLiteral("PRAGMA user_version=99")));
    QString error;
    EXPECT_FALSE(schema::migrate(db, &error));
    EXPECT_TRUE(error.contains(QStringLiteral("schema version 99 is newer"))) << error.toStdString();
    EXPECT_EQ(schema::version(db), 99);
    EXPECT_FALSE(d.exec(QStringLiteral("SELECT 1 FROM conversations")));
}

QByteArray pngBytes() {
    QImage image(40, 30, QImage::Format_RGB32);
    image.fill(Qt::red);
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
    return bytes;
}

TEST(StorageWorker, SaveListSearchLoadDelete) {
    QTemporaryDir dir;
    StorageWorker w;
    QSignalSpy opened(&w, &StorageWorker::opened), listed(&w, &StorageWorker::listed),
        loaded(&w, &StorageWorker::loaded), failed(&w, &StorageWorker::failed);
    w.open(dir.filePath(QStringLiteral("c.sqlite")));
    ASSERT_EQ(opened.count(), 1);
    ASSERT_TRUE(opened.at(0).at(0).toBool()) << opened.at(0).at(1).toString().toStdString();

    ConversationInfo a{QStringLiteral("a"), QStringLiteral("Sorting lists"), 1, 10, false, QStringLiteral("a2")};
    ConversationInfo b{QStringLiteral("b"), QStringLiteral("Weather"), 2, 20, true, {}};
    w.saveConversation(a);
    w.saveConversation(b);
    ChatMessage q;
    q.id = QStringLiteral("a1");
    q.role = QStringLiteral("user");
    q.content = QStringLiteral("How do I sort?");
    q.createdMs = 5;
    q.attachments = {{QStringLiteral("img1"), QStringLiteral("red.png"), QStringLiteral("image/png"), pngBytes()}};
    ChatMessage r;
    r.id = QStringLiteral("a2");
    r.parentId = QStringLiteral("a1");
    r.role = QStringLiteral("assistant");
    r.content = QStringLiteral("Use sorted(); it is a stable mergesort.");
    r.reasoning = QStringLiteral("timsort actually");
    r.state = QStringLiteral("stopped");
    r.stats = {{QStringLiteral("generatedTokens"), 12}, {QStringLiteral("tokensPerSecond"), 30.5}};
    r.thinkingMs = 1200;
    r.createdMs = 6;
    r.model = QStringLiteral("tiny");
    w.saveMessage(QStringLiteral("a"), q);
    w.saveMessage(QStringLiteral("a"), r);
    r.content += QStringLiteral(" More.");  // saved again: an update, not a second row
    w.saveMessage(QStringLiteral("a"), r);
    EXPECT_EQ(failed.count(), 0) << failed.value(0).value(0).toString().toStdString();

    auto ids = [&](const QString& filter) {
        w.listConversations(7, filter);
        QStringList out;
        for (const ConversationInfo& c : listed.takeLast().at(1).value<QList<ConversationInfo>>()) out.append(c.id);
        return out;
    };
    EXPECT_EQ(ids({}), QStringList({"a", "b"})) << "the conversation saved into last comes first";
    EXPECT_EQ(ids(QStringLiteral("weath")), QStringList({"b"})) << "by title, any case";
    EXPECT_EQ(ids(QStringLiteral("MERGESORT")), QStringList({"a"})) << "by message text";
    EXPECT_EQ(ids(QStringLiteral("timsort")), QStringList({"a"})) << "by reasoning";
    EXPECT_EQ(ids(QStringLiteral("100%")), QStringList()) << "LIKE wildcards are literal";

    w.loadConversation(8, QStringLiteral("a"));
    const LoadedConversation c = loaded.takeLast().at(1).value<LoadedConversation>();
    ASSERT_TRUE(c.found);
    EXPECT_FALSE(c.info.thinkingEnabled);
    EXPECT_EQ(c.info.activeLeaf, QStringLiteral("a2"));
    ASSERT_EQ(c.messages.size(), 2);
    EXPECT_EQ(c.messages[0].attachments.size(), 1);
    EXPECT_EQ(c.messages[0].attachments[0].data, pngBytes());
    EXPECT_EQ(c.thumbnails.value(QStringLiteral("img1")).size(), QSize(40, 30));
    const ChatMessage& back = c.messages[1];
    EXPECT_EQ(back.content, r.content);
    EXPECT_EQ(back.reasoning, r.reasoning);
    EXPECT_EQ(back.state, QStringLiteral("stopped"));
    EXPECT_EQ(back.parentId, QStringLiteral("a1"));
    EXPECT_EQ(back.thinkingMs, 1200);
    EXPECT_EQ(back.model, QStringLiteral("tiny"));
    EXPECT_EQ(back.stats.value(QStringLiteral("generatedTokens")).toInt(), 12);

    w.deleteConversation(QStringLiteral("a"));
    EXPECT_EQ(ids({}), QStringList({"b"}));
    w.loadConversation(9, QStringLiteral("a"));
    EXPECT_FALSE(loaded.takeLast().at(1).value<LoadedConversation>().found);
    w.close();
    Db d(dir.filePath(QStringLiteral("c.sqlite")));
    EXPECT_EQ(d.scalar(QStringLiteral("SELECT COUNT(*) FROM messages")).toInt(), 0) << "messages go with their chat";
    EXPECT_EQ(d.scalar(QStringLiteral("SELECT COUNT(*) FROM attachments")).toInt(), 0);
}

}  // namespace
}  // namespace ember::desktop
