// SPDX-License-Identifier: MIT
// The manifest beside a partial download ("<file>.part.json"): which version of the file (hash and size) the .part
// holds, so that a resume never splices two versions together. Qt Core only, so that the parser can be fuzzed.
#pragma once

#include <QByteArray>
#include <QString>

namespace ember::models {

struct DownloadManifest {
    QString url;
    qint64 size = -1;
    QString hash;  // hex of the expected hash (sha256 or git blob id)
};

QByteArray downloadManifestJson(const DownloadManifest& manifest);
// False with `error` naming the problem when `json` is not a manifest (the .part is then not resumed).
bool parseDownloadManifest(const QByteArray& json, DownloadManifest& manifest, QString& error);

}  // namespace ember::models
