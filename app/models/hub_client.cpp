// SPDX-License-Identifier: MIT
#include "hub_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>

namespace ember::models {

Q_LOGGING_CATEGORY(lcHub, "ember.models.hub")

namespace {

constexpr int kMaxListingPages = 1000;
constexpr qint64 kMaxListingPageBytes = 64ll << 20;

QUrl joinPath(const QUrl& base, const QString& suffix) {
    QUrl url = base;
    QString path = url.path();
    while (path.endsWith(QLatin1Char('/'))) path.chop(1);
    url.setPath(path + suffix);
    return url;
}

QString encodedRepoPath(const QString& path) {
    QStringList parts = path.split(QLatin1Char('/'));
    for (QString& p : parts) p = QString::fromLatin1(QUrl::toPercentEncoding(p));
    return parts.join(QLatin1Char('/'));
}

// The URL of rel="next" in a Link header, if any.
QUrl nextPageUrl(const QByteArray& link, const QUrl& current) {
    static const QRegularExpression re(QStringLiteral(R"(<([^>]+)>\s*;\s*rel="?next"?)"));
    const QRegularExpressionMatch m = re.match(QString::fromUtf8(link));
    return m.hasMatch() ? current.resolved(QUrl(m.captured(1))) : QUrl();
}

}  // namespace

QUrl listingUrl(const HubSettings& settings, const QString& repo) {
    QUrl url = joinPath(settings.baseUrl, QStringLiteral("/api/models/") + repo + QStringLiteral("/tree/main"));
    url.setQuery(QStringLiteral("recursive=1"));
    return url;
}

QUrl resolveUrl(const HubSettings& settings, const QString& repo, const QString& path) {
    QUrl url = settings.baseUrl;
    QString basePath = url.path(QUrl::FullyEncoded);
    while (basePath.endsWith(QLatin1Char('/'))) basePath.chop(1);
    url.setPath(basePath + QLatin1Char('/') + repo + QStringLiteral("/resolve/main/") + encodedRepoPath(path),
                QUrl::TolerantMode);
    return url;
}

QNetworkRequest hubRequest(const HubSettings& settings, const QUrl& url) {
    QNetworkRequest request(url);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    request.setHeader(QNetworkRequest::UserAgentHeader, QByteArrayLiteral("ember-models/0.1"));
    if (!settings.token.isEmpty() && url.host() == settings.baseUrl.host() && url.port() == settings.baseUrl.port())
        request.setRawHeader("Authorization", "Bearer " + settings.token.toUtf8());
    return request;
}

QUrl redirectTarget(const QNetworkReply* reply) {
    // Not header(LocationHeader): Qt parses only absolute URLs there, so a relative one came back empty and
    // "resolved" to the request URL itself, a redirect loop.
    const QByteArray location = reply->rawHeader("Location").trimmed();
    const QUrl reference = QUrl::fromEncoded(location, QUrl::TolerantMode);
    if (location.isEmpty() || !reference.isValid()) return {};
    return reply->url().resolved(reference);
}

bool isValidRepoId(const QString& repo) {
    static const QRegularExpression re(QStringLiteral(R"(^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$)"));
    return re.match(repo).hasMatch() && !repo.contains(QStringLiteral(".."));
}

bool isSafeRepoPath(const QString& path) {
    if (path.isEmpty() || path.startsWith(QLatin1Char('/')) || path.contains(QLatin1Char('\\'))) return false;
    for (const QString& part : path.split(QLatin1Char('/')))
        if (part.isEmpty() || part == QStringLiteral(".") || part == QStringLiteral("..")) return false;
    return true;
}

bool parseListing(const QByteArray& json, QList<HubFile>& out, QString& error) {
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        error =
            QStringLiteral("listing is not JSON (%1 at byte %2)").arg(parseError.errorString()).arg(parseError.offset);
        return false;
    }
    if (!doc.isArray()) {
        error = QStringLiteral("listing is not a JSON array");
        return false;
    }
    for (const QJsonValue& v : doc.array()) {
        const QJsonObject o = v.toObject();
        if (o.value(QStringLiteral("type")).toString() == QStringLiteral("directory")) continue;
        HubFile f;
        f.path = o.value(QStringLiteral("path")).toString();
        if (f.path.isEmpty()) {
            error = QStringLiteral("listing entry without a path");
            return false;
        }
        f.size = o.value(QStringLiteral("size")).toInteger(-1);
        f.gitOid = o.value(QStringLiteral("oid")).toString().toLower();
        const QJsonObject lfs = o.value(QStringLiteral("lfs")).toObject();
        if (!lfs.isEmpty()) {
            f.sha256 = lfs.value(QStringLiteral("oid")).toString().toLower();
            f.size = lfs.value(QStringLiteral("size")).toInteger(f.size);
        }
        out.append(f);
    }
    return true;
}

HubListing::HubListing(QNetworkAccessManager* network, HubSettings settings, QString repo, QObject* parent)
    : QObject(parent), m_network(network), m_settings(std::move(settings)), m_repo(std::move(repo)) {}

void HubListing::start() {
    m_files.clear();
    m_pages = 0;
    fetch(listingUrl(m_settings, m_repo), 0);
}

void HubListing::fetch(const QUrl& url, int redirects) {
    QNetworkRequest request = hubRequest(m_settings, url);
    request.setTransferTimeout(m_settings.stallTimeoutMs);
    QNetworkReply* reply = m_network->get(request);
    // A listing is JSON text: a body past the limit is cut off as it arrives, not buffered whole.
    connect(reply, &QNetworkReply::downloadProgress, reply, [reply](qint64 received, qint64) {
        if (received > kMaxListingPageBytes) {
            reply->setProperty("tooLarge", true);
            reply->abort();
        }
    });
    connect(reply, &QNetworkReply::finished, this, [this, reply, redirects] { onFinished(reply, redirects); });
}

void HubListing::onFinished(QNetworkReply* reply, int redirects) {
    reply->deleteLater();
    const QUrl url = reply->url();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (reply->property("tooLarge").toBool() || reply->bytesAvailable() > kMaxListingPageBytes)
        return Q_EMIT failed(QStringLiteral("%1: listing page is larger than 64 MiB").arg(url.toString()));
    if (status >= 300 && status < 400) {
        const QUrl target = redirectTarget(reply);
        if (target.isEmpty())
            return Q_EMIT failed(
                QStringLiteral("%1: HTTP %2 without a valid Location").arg(url.toString()).arg(status));
        if (redirects >= m_settings.maxRedirects)
            return Q_EMIT failed(
                QStringLiteral("%1: more than %2 redirects").arg(url.toString()).arg(m_settings.maxRedirects));
        return fetch(target, redirects + 1);
    }
    if (reply->error() != QNetworkReply::NoError || status != 200) {
        const QString why = status ? QStringLiteral("HTTP %1").arg(status) : reply->errorString();
        if (status == 404)
            return Q_EMIT failed(QStringLiteral("%1: HTTP 404: no repository '%2' on %3")
                                     .arg(url.toString(), m_repo, m_settings.baseUrl.toString()));
        if (status == 401 || status == 403)
            return Q_EMIT failed(QStringLiteral("%1: HTTP %2: the repository needs a hub token (--token or HF_TOKEN)")
                                     .arg(url.toString())
                                     .arg(status));
        return Q_EMIT failed(QStringLiteral("%1: listing failed: %2").arg(url.toString(), why));
    }
    QString error;
    if (!parseListing(reply->readAll(), m_files, error))
        return Q_EMIT failed(QStringLiteral("%1: %2").arg(url.toString(), error));
    const QUrl next = nextPageUrl(reply->rawHeader("Link"), url);
    if (next.isValid() && ++m_pages < kMaxListingPages) return fetch(next, 0);
    qCDebug(lcHub) << "listing of" << m_repo << "has" << m_files.size() << "files";
    Q_EMIT finished();
}

}  // namespace ember::models
