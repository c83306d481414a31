// SPDX-License-Identifier: MIT
// Conversation storage: the versioned schema migrations (fresh files, every older version with data in it, a
// failing step rolled back, a newer file refused untouched), WAL, the storage worker's save / list / search /
// load / delete round trip with images, and damaged or read-only files (issue 20): a damaged file is moved aside
// and what can be read of it recovered into a new one that keeps working; a read-only one opens read-only.
#include <gtest/gtest.h>

#include <functional>

#include "app_harness.h"

#include <QBuffer>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QUuid>

#include "storage/database_salvage.h"
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

// --- damaged and read-only files (issue 20) -----------------------------------------------------------------

constexpr int kChats = 60;
constexpr int kMessagesPerChat = 8;

// A history of kChats conversations of kMessagesPerChat messages (some 300 KiB, many pages), closed so that the
// WAL is checkpointed into the file.
void writeHistory(const QString& path) {
    StorageWorker w;
    QSignalSpy failed(&w, &StorageWorker::failed);
    w.open(path);
    for (int c = 0; c < kChats; ++c) {
        const QString id = QStringLiteral("c%1").arg(c);
        w.saveConversation({id, QStringLiteral("Chat %1").arg(c), c, c, true, {}});
        for (int m = 0; m < kMessagesPerChat; ++m) {
            ChatMessage msg;
            msg.id = QStringLiteral("%1-m%2").arg(id).arg(m);
            msg.role = m % 2 ? QStringLiteral("assistant") : QStringLiteral("user");
            msg.content = QStringLiteral("message %1 of %2 ").arg(m).arg(id).repeated(20);
            msg.createdMs = c * 100 + m;
            w.saveMessage(id, msg);
        }
    }
    w.close();
    ASSERT_EQ(failed.count(), 0);
    ASSERT_FALSE(QFileInfo::exists(path + QStringLiteral("-wal")) &&
                 QFileInfo(path + QStringLiteral("-wal")).size() > 0);
}

void overwrite(const QString& path, qint64 offset, const QByteArray& bytes) {
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::ReadWrite));
    ASSERT_TRUE(f.seek(offset));
    ASSERT_EQ(f.write(bytes), bytes.size());
}

struct Opened {
    bool ok = false;
    QString error, movedTo, summary, readOnly;
    QStringList ids;
};

// Opens `path` with a fresh worker and lists its conversations; `then` runs on the open worker.
Opened openAndList(const QString& path, const std::function<void(StorageWorker&)>& then = {}) {
    StorageWorker w;
    QSignalSpy opened(&w, &StorageWorker::opened), recovered(&w, &StorageWorker::recovered),
        readOnly(&w, &StorageWorker::readOnly), listed(&w, &StorageWorker::listed);
    w.open(path);
    Opened out;
    out.ok = opened.value(0).value(0).toBool();
    out.error = opened.value(0).value(1).toString();
    out.movedTo = recovered.value(0).value(0).toString();
    out.summary = recovered.value(0).value(1).toString();
    out.readOnly = readOnly.value(0).value(0).toString();
    w.listConversations(1, {});
    for (const ConversationInfo& c : listed.value(0).value(1).value<QList<ConversationInfo>>()) out.ids.append(c.id);
    if (then) then(w);
    return out;
}

// The damaged file was moved aside under the documented name, the new file at the path is sound and writable.
void expectRecoveredAndWorking(const QString& path, const Opened& o) {
    ASSERT_TRUE(o.ok) << o.error.toStdString();
    EXPECT_TRUE(o.movedTo.startsWith(path + QStringLiteral(".corrupt-"))) << o.movedTo.toStdString();
    EXPECT_TRUE(QFileInfo::exists(o.movedTo));
    EXPECT_TRUE(o.summary.contains(QStringLiteral("recovered"))) << o.summary.toStdString();
    EXPECT_FALSE(QFileInfo::exists(o.movedTo + QStringLiteral(".header-4096"))) << "the rebuilt copy is removed";
    const Opened again = openAndList(path, [](StorageWorker& w) {
        w.saveConversation({QStringLiteral("new"), QStringLiteral("After recovery"), 1, 1, true, {}});
    });
    EXPECT_TRUE(again.ok) << again.error.toStdString();
    EXPECT_TRUE(again.movedTo.isEmpty()) << "the new file is sound";
    EXPECT_TRUE(openAndList(path).ids.contains(QStringLiteral("new"))) << "new chats are saved in the new file";
}

TEST(DamagedHistory, ZeroedHeaderIsRecoveredCompletely) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("conversations.sqlite"));
    writeHistory(path);
    overwrite(path, 0, QByteArray(100, '\0'));
    const Opened o = openAndList(path);
    expectRecoveredAndWorking(path, o);
    EXPECT_EQ(o.ids.size(), kChats) << o.summary.toStdString();  // page 1 keeps the schema; only the header was rebuilt
    EXPECT_EQ(o.summary,
              QStringLiteral("%1 conversations and %2 messages recovered").arg(kChats).arg(kChats * kMessagesPerChat));
}

TEST(DamagedHistory, TruncatedFileKeepsWhatIsLeft) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("conversations.sqlite"));
    writeHistory(path);
    QFile::resize(path, QFileInfo(path).size() / 2);
    const Opened o = openAndList(path);
    expectRecoveredAndWorking(path, o);
    EXPECT_GT(o.ids.size(), 0) << o.summary.toStdString();
}

TEST(DamagedHistory, GarbagePagesKeepTheReadableRows) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("conversations.sqlite"));
    writeHistory(path);
    const qint64 pages = QFileInfo(path).size() / 4096;
    ASSERT_GT(pages, 40);
    QByteArray garbage(6 * 4096, '\0');
    QRandomGenerator random(20);
    for (char& c : garbage) c = static_cast<char>(random.bounded(256));
    overwrite(path, (pages / 2) * 4096, garbage);
    const Opened o = openAndList(path);
    expectRecoveredAndWorking(path, o);
    EXPECT_GT(o.ids.size(), 0) << o.summary.toStdString();
    StorageWorker w;
    QSignalSpy loaded(&w, &StorageWorker::loaded);
    w.open(path);
    w.loadConversation(1, o.ids.value(0));
    EXPECT_TRUE(loaded.value(0).value(1).value<LoadedConversation>().found);
}

TEST(DamagedHistory, TheLogNamesTheRealCause) {
    // A file that is not a database used to be reported as "cannot switch to WAL journaling".
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("c.sqlite"));
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(QByteArray(8192, 'x'));
    f.close();
    Db d(path);
    QSqlDatabase db = d.db();
    QString error;
    EXPECT_FALSE(schema::configure(db, &error));
    EXPECT_TRUE(error.contains(QStringLiteral("not a database"))) << error.toStdString();
    EXPECT_EQ(databaseDamage(db), QStringLiteral("file is not a database"));
}

TEST(ReadOnlyHistory, ReadOnlyFileOpensReadOnlyAndSavesNothing) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("conversations.sqlite"));
    writeHistory(path);
    const QByteArray before = [&] {
        QFile f(path);
        f.open(QIODevice::ReadOnly);
        return f.readAll();
    }();
    ASSERT_TRUE(QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::ReadGroup | QFileDevice::ReadOther));
    const Opened o = openAndList(path, [&](StorageWorker& w) {
        QSignalSpy failed(&w, &StorageWorker::failed), saved(&w, &StorageWorker::messageSaved);
        w.saveConversation({QStringLiteral("new"), QStringLiteral("Unsaved"), 1, 99999, true, {}});
        ChatMessage m;
        m.id = QStringLiteral("new-1");
        m.role = QStringLiteral("user");
        w.saveMessage(QStringLiteral("new"), m);
        EXPECT_EQ(failed.count(), 0) << "the banner says it once; no error per save";
        EXPECT_EQ(saved.count(), 0) << "nothing claims to be saved";
    });
    EXPECT_TRUE(o.ok) << o.error.toStdString();
    EXPECT_TRUE(o.readOnly.contains(QStringLiteral("is read-only"))) << o.readOnly.toStdString();
    EXPECT_EQ(o.ids.size(), kChats) << "the whole history is shown";
    EXPECT_TRUE(o.movedTo.isEmpty());
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::ReadOnly));
    EXPECT_TRUE(f.readAll() == before) << "the file is untouched";
    QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
}

TEST(ReadOnlyHistory, ReadOnlyFolderOpensReadOnly) {
    QTemporaryDir dir;
    const QString folder = dir.filePath(QStringLiteral("data"));
    QDir().mkpath(folder);
    const QString path = folder + QStringLiteral("/conversations.sqlite");
    writeHistory(path);
    ASSERT_TRUE(QFile::setPermissions(folder, QFileDevice::ReadOwner | QFileDevice::ExeOwner));
    const Opened o = openAndList(path);
    QFile::setPermissions(folder, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    EXPECT_TRUE(o.ok) << o.error.toStdString();
    EXPECT_TRUE(o.readOnly.contains(QStringLiteral("folder"))) << o.readOnly.toStdString();
    EXPECT_EQ(o.ids.size(), kChats);
}

TEST(ReadOnlyHistory, NoHistoryInAReadOnlyFolderIsSaidNotHidden) {
    QTemporaryDir dir;
    const QString folder = dir.filePath(QStringLiteral("data"));
    QDir().mkpath(folder);
    ASSERT_TRUE(QFile::setPermissions(folder, QFileDevice::ReadOwner | QFileDevice::ExeOwner));
    const Opened o = openAndList(folder + QStringLiteral("/conversations.sqlite"));
    QFile::setPermissions(folder, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    EXPECT_FALSE(o.ok);
    EXPECT_FALSE(o.readOnly.isEmpty());
    EXPECT_TRUE(o.error.contains(QStringLiteral("cannot be created"))) << o.error.toStdString();
}

}  // namespace
}  // namespace ember::desktop
