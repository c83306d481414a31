// SPDX-License-Identifier: MIT
// The hub's listing format and URLs (shapes as documented for GET /api/models/{repo}/tree/{revision}).
#include <gtest/gtest.h>

#include "hub_client.h"

namespace ember::models {
namespace {

TEST(HubListing, ParsesLfsAndGitFilesAndSkipsDirectories) {
    const QByteArray json = R"([
      {"type":"file","oid":"a2b4c6d8e0a2b4c6d8e0a2b4c6d8e0a2b4c6d8e0","size":1519,"path":".gitattributes"},
      {"type":"directory","oid":"0000000000000000000000000000000000000000","size":0,"path":"UD-Q8_K_XL"},
      {"type":"file","oid":"1111111111111111111111111111111111111111","size":22850000000,
       "lfs":{"oid":"CAFEBABE00000000000000000000000000000000000000000000000000000001","size":22850000000,"pointerSize":135},
       "path":"Qwen3.6-35B-A3B-UD-Q4_K_XL.gguf"}
    ])";
    QList<HubFile> files;
    QString error;
    ASSERT_TRUE(parseListing(json, files, error)) << error.toStdString();
    ASSERT_EQ(files.size(), 2);
    EXPECT_EQ(files[0].path, QStringLiteral(".gitattributes"));
    EXPECT_TRUE(files[0].sha256.isEmpty());
    EXPECT_EQ(files[0].gitOid, QStringLiteral("a2b4c6d8e0a2b4c6d8e0a2b4c6d8e0a2b4c6d8e0"));
    EXPECT_EQ(files[1].size, 22850000000);
    EXPECT_EQ(files[1].sha256, QStringLiteral("cafebabe00000000000000000000000000000000000000000000000000000001"));
}

TEST(HubListing, RejectsWhatIsNotAListing) {
    QList<HubFile> files;
    QString error;
    EXPECT_FALSE(parseListing("{\"error\":\"Repository not found\"}", files, error));
    EXPECT_EQ(error, QStringLiteral("listing is not a JSON array"));
    EXPECT_FALSE(parseListing("<html>", files, error));
    EXPECT_TRUE(error.startsWith(QStringLiteral("listing is not JSON")));
    EXPECT_FALSE(parseListing("[{\"type\":\"file\",\"size\":3}]", files, error));
    EXPECT_EQ(error, QStringLiteral("listing entry without a path"));
}

TEST(HubUrls, DefaultAndMirror) {
    HubSettings hub;
    EXPECT_EQ(listingUrl(hub, QStringLiteral("unsloth/Qwen3.6-35B-A3B-GGUF")).toString(),
              QStringLiteral("https://huggingface.co/api/models/unsloth/Qwen3.6-35B-A3B-GGUF/tree/main?recursive=1"));
    EXPECT_EQ(resolveUrl(hub, QStringLiteral("o/n"), QStringLiteral("sub/a b.gguf")).toString(QUrl::FullyEncoded),
              QStringLiteral("https://huggingface.co/o/n/resolve/main/sub/a%20b.gguf"));
    hub.baseUrl = QUrl(QStringLiteral("http://mirror.example:8080/hf/"));
    EXPECT_EQ(resolveUrl(hub, QStringLiteral("o/n"), QStringLiteral("m.gguf")).toString(),
              QStringLiteral("http://mirror.example:8080/hf/o/n/resolve/main/m.gguf"));
    EXPECT_EQ(listingUrl(hub, QStringLiteral("o/n")).toString(),
              QStringLiteral("http://mirror.example:8080/hf/api/models/o/n/tree/main?recursive=1"));
}

TEST(HubUrls, TokenOnlyForTheHubHost) {
    HubSettings hub;
    hub.token = QStringLiteral("hf_secret");
    EXPECT_EQ(hubRequest(hub, QUrl(QStringLiteral("https://huggingface.co/o/n/resolve/main/m.gguf")))
                  .rawHeader("Authorization"),
              QByteArray("Bearer hf_secret"));
    EXPECT_TRUE(
        hubRequest(hub, QUrl(QStringLiteral("https://cdn-lfs.example/abc"))).rawHeader("Authorization").isEmpty());
}

TEST(HubNames, RepoIdsAndPaths) {
    EXPECT_TRUE(isValidRepoId(QStringLiteral("unsloth/Qwen3.6-35B-A3B-GGUF")));
    EXPECT_FALSE(isValidRepoId(QStringLiteral("unsloth")));
    EXPECT_FALSE(isValidRepoId(QStringLiteral("a/b/c")));
    EXPECT_FALSE(isValidRepoId(QStringLiteral("../etc")));
    EXPECT_FALSE(isValidRepoId(QStringLiteral("o/..")));
    EXPECT_TRUE(isSafeRepoPath(QStringLiteral("UD-Q4_K_XL/model-00001-of-00002.gguf")));
    EXPECT_FALSE(isSafeRepoPath(QStringLiteral("../x.gguf")));
    EXPECT_FALSE(isSafeRepoPath(QStringLiteral("/etc/passwd")));
    EXPECT_FALSE(isSafeRepoPath(QStringLiteral("a//b")));
    EXPECT_FALSE(isSafeRepoPath(QString()));
}

}  // namespace
}  // namespace ember::models
