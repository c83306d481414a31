// SPDX-License-Identifier: MIT
// The Hugging Face Hub's two endpoints the model manager uses: the file listing of a repository
// (GET {base}/api/models/{repo}/tree/main?recursive=1, entries with path, size, oid and lfs {oid = sha256, size})
// and the resolve URL of a file ({base}/{repo}/resolve/main/{path}, which redirects to a CDN).
//
// The base URL is configurable (a mirror replaces https://huggingface.co) and a token is optional. The client
// never blocks: listings arrive by signal.
#pragma once

#include <QList>
#include <QNetworkRequest>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QUrl>

class QNetworkAccessManager;
class QNetworkReply;

namespace ember::models {

struct HubSettings {
    QUrl baseUrl = QUrl(QStringLiteral("https://huggingface.co"));
    QString token;  // sent as "Authorization: Bearer" to the hub's host only, never to a CDN it redirects to
    int maxRedirects = 10;
    int stallTimeoutMs = 60000;  // a transfer that receives nothing for this long is aborted and retried
    int maxRetries = 5;
    int retryBaseMs = 1000;     // backoff: base, 2 x base, 4 x base, ... capped at 60 s
    qint64 maxWastedBytes = 0;  // received bytes a file may throw away (restarts) before it fails; 0: its size,
                                // at least 16 MiB
};

// One file of a repository as the listing describes it.
struct HubFile {
    QString path;
    qint64 size = -1;
    QString sha256;  // lfs.oid: the SHA-256 of the content (LFS files)
    QString gitOid;  // oid: the git blob SHA-1 (every file; the only hash of small non-LFS files)
};

QUrl listingUrl(const HubSettings& settings, const QString& repo);
QUrl resolveUrl(const HubSettings& settings, const QString& repo, const QString& path);
// A request to the hub with the token attached when the URL is on the hub's host.
QNetworkRequest hubRequest(const HubSettings& settings, const QUrl& url);
// Where a redirect points: its Location resolved against the request URL (RFC 9110 section 10.2.2, so a relative
// reference such as "/cdn/x.gguf" or "../x" too). An empty QUrl when the Location is missing or malformed.
QUrl redirectTarget(const QNetworkReply* reply);
// "owner/name" with safe characters only.
bool isValidRepoId(const QString& repo);
// A repository path without "..", absolute parts or empty segments.
bool isSafeRepoPath(const QString& path);

// Parses one page of the listing. Returns false with `error` set when the JSON is not a listing.
bool parseListing(const QByteArray& json, QList<HubFile>& out, QString& error);

// Fetches a repository's listing, following pagination (Link: <...>; rel="next") and redirects.
class HubListing : public QObject {
    Q_OBJECT
public:
    HubListing(QNetworkAccessManager* network, HubSettings settings, QString repo, QObject* parent = nullptr);
    void start();
    const QList<HubFile>& files() const { return m_files; }

Q_SIGNALS:
    void finished();
    void failed(const QString& error);

private:
    void fetch(const QUrl& url, int redirects);
    void onFinished(QNetworkReply* reply, int redirects);

    QNetworkAccessManager* m_network;
    HubSettings m_settings;
    QString m_repo;
    QList<HubFile> m_files;
    int m_pages = 0;
};

}  // namespace ember::models
