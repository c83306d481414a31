// SPDX-License-Identifier: MIT
// libFuzzer target: any byte string given to the model manager's state parsers (library.json, a download's
// .part.json) is accepted or rejected with a reason, never more; what is accepted is written back and read again
// to the same text, so a state file the app writes is one it can read.
#include <QByteArray>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "download_manifest.h"
#include "library_state.h"

namespace {

using namespace ember::models;

void libraryState(const QByteArray& input) {
    const QString folder = QStringLiteral("/models");
    QList<LibraryEntry> entries;
    QString error;
    if (!parseLibraryState(input, folder, entries, error)) {
        if (error.isEmpty() || !entries.isEmpty()) std::abort();  // a rejection says why and keeps nothing
        return;
    }
    const QByteArray written = libraryStateJson(entries, folder);
    QList<LibraryEntry> again;
    if (!parseLibraryState(written, folder, again, error) || again.size() != entries.size()) std::abort();
    if (libraryStateJson(again, folder) != written) std::abort();
}

void downloadManifest(const QByteArray& input) {
    DownloadManifest manifest, again;
    QString error;
    if (!parseDownloadManifest(input, manifest, error)) {
        if (error.isEmpty()) std::abort();
        return;
    }
    if (!parseDownloadManifest(downloadManifestJson(manifest), again, error) || again.url != manifest.url ||
        again.size != manifest.size || again.hash != manifest.hash)
        std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QByteArray input = QByteArray::fromRawData(reinterpret_cast<const char*>(data), qsizetype(size));
    libraryState(input);
    downloadManifest(input);
    return 0;
}
