// SPDX-License-Identifier: MIT
// .part.json to and from DownloadManifest.
#include "download_manifest.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace ember::models {

QByteArray downloadManifestJson(const DownloadManifest& manifest) {
    QJsonObject o;
    o.insert(QStringLiteral("url"), manifest.url);
    o.insert(QStringLiteral("size"), manifest.size);
    o.insert(QStringLiteral("hash"), manifest.hash);
    return QJsonDocument(o).toJson();
}

bool parseDownloadManifest(const QByteArray& json, DownloadManifest& manifest, QString& error) {
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError || !doc.isObject()) {
        error = parseError.error != QJsonParseError::NoError
                    ? QStringLiteral("%1 at byte %2").arg(parseError.errorString()).arg(parseError.offset)
                    : QStringLiteral("not a JSON object");
        return false;
    }
    const QJsonObject o = doc.object();
    const QJsonValue url = o.value(QStringLiteral("url")), size = o.value(QStringLiteral("size")),
                     hash = o.value(QStringLiteral("hash"));
    if (!hash.isString() || hash.toString().isEmpty()) {
        error = QStringLiteral("no 'hash'");
        return false;
    }
    if (size.toInteger(-1) < 0) {
        error = QStringLiteral("'size' is not a byte count");
        return false;
    }
    if (!url.isUndefined() && !url.isString()) {
        error = QStringLiteral("'url' is not a string");
        return false;
    }
    manifest = {url.toString(), size.toInteger(), hash.toString()};
    return true;
}

}  // namespace ember::models
