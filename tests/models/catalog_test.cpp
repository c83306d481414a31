// SPDX-License-Identifier: MIT
// The catalog built into ember-models (resources/catalog.json) and the catalog parser's errors.
#include <gtest/gtest.h>

#include "catalog.h"
#include "common/fixture_path.h"

namespace ember::models {
namespace {

Catalog parse(const char* json, QString* error) {
    return Catalog::fromJson(QByteArray(json), QStringLiteral("c.json"), error);
}

TEST(Catalog, BuiltInHasTheSeedUnitsAndStarters) {
    const Catalog c = Catalog::builtIn();
    ASSERT_GE(c.entries().size(), 5);

    const CatalogEntry* mtp = c.find(QStringLiteral("qwen3.6-35b-a3b-rocmfp4-mtp-vision"));
    ASSERT_NE(mtp, nullptr);
    ASSERT_EQ(mtp->files.size(), 3);
    EXPECT_EQ(mtp->files[0].role, QStringLiteral("model"));
    EXPECT_EQ(mtp->files[1].path, QStringLiteral("mmproj-F32.gguf"));
    EXPECT_EQ(mtp->files[1].role, QStringLiteral("vision_projector"));
    EXPECT_EQ(mtp->files[2].path, QStringLiteral("chat_template.jinja"));
    EXPECT_EQ(mtp->files[2].role, QStringLiteral("template"));
    EXPECT_TRUE(mtp->capabilities.contains(QStringLiteral("vision")));
    EXPECT_TRUE(mtp->capabilities.contains(QStringLiteral("mtp")));

    const CatalogEntry* dflash = c.find(QStringLiteral("qwen3.6-35b-a3b-rocmfp4-dflash"));
    ASSERT_NE(dflash, nullptr);
    EXPECT_EQ(dflash->files.size(), 1);
    EXPECT_TRUE(dflash->capabilities.contains(QStringLiteral("drafted")));

    const CatalogEntry* unsloth = c.find(QStringLiteral("qwen3.6-35b-a3b-ud-q4_k_xl"));
    ASSERT_NE(unsloth, nullptr);
    EXPECT_TRUE(unsloth->files[0].path.contains(QStringLiteral("UD-Q4_K_XL")));

    int starters = 0;
    for (const CatalogEntry& e : c.entries()) {
        EXPECT_FALSE(e.license.isEmpty()) << e.id.toStdString();
        starters += e.starter;
    }
    EXPECT_GE(starters, 2);
}

TEST(Catalog, SearchMatchesEveryWord) {
    const Catalog c = Catalog::builtIn();
    EXPECT_EQ(c.search(QStringLiteral("rocmfp4 vision")).size(), 1);
    EXPECT_GE(c.search(QStringLiteral("QWEN3.6")).size(), 3);
    EXPECT_TRUE(c.search(QStringLiteral("no-such-model")).isEmpty());
    EXPECT_EQ(c.forRepo(QStringLiteral("unsloth/qwen3.6-35b-a3b-gguf")).size(), 1);
}

TEST(Catalog, FixtureCatalogParses) {
    QString error;
    const Catalog c =
        Catalog::fromFile(QString::fromStdString(test::fixture_path("models/catalog.json").string()), &error);
    EXPECT_TRUE(error.isEmpty()) << error.toStdString();
    EXPECT_EQ(c.entries().size(), 3);
}

TEST(Catalog, ErrorsNameTheFileAndTheEntry) {
    struct Case {
        const char* json;
        const char* error;
    } cases[] = {
        {"[1", "c.json: not JSON"},
        {R"({"version": 2})", "c.json: expected \"version\": 1"},
        {R"({"version":1,"entries":[{"id":"a","name":"A","repo":"x","license":"l","files":[]}]})",
         "c.json: entry 0 ('a'): repo 'x' is not owner/name"},
        {R"({"version":1,"entries":[{"id":"a","name":"A","repo":"o/n","license":"l","files":[{"path":"../m.gguf","role":"model"}]}]})",
         "c.json: entry 0 ('a'): bad file path '../m.gguf'"},
        {R"({"version":1,"entries":[{"id":"a","name":"A","repo":"o/n","license":"l","files":[{"path":"m.gguf","role":"weights"}]}]})",
         "c.json: entry 0 ('a'): file 'm.gguf' has unknown role 'weights'"},
        {R"({"version":1,"entries":[{"id":"a","name":"A","repo":"o/n","license":"l","files":[{"path":"m.gguf","role":"template"}]}]})",
         "c.json: entry 0 ('a'): needs exactly one file with role 'model', has 0"},
        {R"({"version":1,"entries":[{"id":"a","name":"A","repo":"o/n","files":[{"path":"m.gguf","role":"model"}]}]})",
         "c.json: entry 0 ('a'): needs a license note"},
        {R"({"version":1,"entries":[{"id":"a","name":"A","repo":"o/n","license":"l","capabilities":["fast"],"files":[{"path":"m.gguf","role":"model"}]}]})",
         "c.json: entry 0 ('a'): unknown capability 'fast'"},
        {R"({"version":1,"entries":[{"id":"a","name":"A","repo":"o/n","license":"l","files":[{"path":"m.gguf","role":"model"}]},
                                    {"id":"a","name":"B","repo":"o/n","license":"l","files":[{"path":"m.gguf","role":"model"}]}]})",
         "c.json: entry 1 ('a'): duplicate id"},
    };
    for (const Case& c : cases) {
        QString error;
        const Catalog catalog = parse(c.json, &error);
        EXPECT_TRUE(catalog.entries().isEmpty());
        EXPECT_TRUE(error.startsWith(QString::fromUtf8(c.error))) << error.toStdString() << "\n  expected: " << c.error;
    }
}

TEST(Catalog, RoleForFileName) {
    EXPECT_EQ(roleForFileName(QStringLiteral("mmproj-F32.gguf")), QStringLiteral("vision_projector"));
    EXPECT_EQ(roleForFileName(QStringLiteral("sub/chat_template.jinja")), QStringLiteral("template"));
    EXPECT_EQ(roleForFileName(QStringLiteral("dflash-Qwen3.6-Q8_0.gguf")), QStringLiteral("draft"));
    EXPECT_EQ(roleForFileName(QStringLiteral("Qwen3.6-35B-A3B-UD-Q4_K_XL.gguf")), QStringLiteral("model"));
    EXPECT_EQ(roleForFileName(QStringLiteral("README.md")), QString());
}

}  // namespace
}  // namespace ember::models

namespace ember::models {
namespace {

TEST(Catalog, BuiltInMemoryHintsFollowTheSpec) {
    const Catalog c = Catalog::builtIn();
    // qwen35moe.md §5.6: 10 attention layers x 2 kv heads x (256 + 256) x 2 bytes, + the MTP layer's cache.
    const CatalogEntry* mtp = c.find(QStringLiteral("qwen3.6-35b-a3b-rocmfp4-mtp-vision"));
    ASSERT_NE(mtp, nullptr);
    EXPECT_EQ(mtp->memory.kvBytesPerPosition, 10u * 2 * 512 * 2 + 2048);
    EXPECT_EQ(mtp->memory.recurrentStateBytes, 30ull * (3 * 8192 + 128 * 4096) * 4);
    EXPECT_EQ(mtp->memory.speculativeTokens, 3u);
    const CatalogEntry* plain = c.find(QStringLiteral("qwen3.6-35b-a3b-ud-q4_k_xl"));
    ASSERT_NE(plain, nullptr);
    EXPECT_EQ(plain->memory.kvBytesPerPosition, 10u * 2 * 512 * 2);
    for (const CatalogEntry& e : c.entries()) EXPECT_TRUE(e.memory.known()) << e.id.toStdString();
}

}  // namespace
}  // namespace ember::models
