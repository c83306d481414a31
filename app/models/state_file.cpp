// SPDX-License-Identifier: MIT
// Atomic replacement of the model manager's state files (QSaveFile, unbuffered, synced before the rename).
#include "state_file.h"

#include <unistd.h>
#include <QSaveFile>
#include <cerrno>
#include <cstring>

namespace ember::models {

bool writeStateFile(const QString& path, const QByteArray& data, QString* error) {
    const auto failed = [&](const QString& why) {
        if (error) *error = QStringLiteral("%1: cannot write: %2").arg(path, why);
        return false;
    };
    // Unbuffered, so that QSaveFile sees a failed write at once: buffered, the write succeeds into Qt's buffer and
    // the flush inside commit() fails on a full disk, yet Qt 6.4 renames the empty temporary file over the target.
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly | QIODevice::Unbuffered)) return failed(out.errorString());
    // Until a write fails: a short write sets no error; the next one says why (ENOSPC, EFBIG).
    for (qint64 done = 0, n = 0; done < data.size(); done += n)
        if ((n = out.write(data.constData() + done, data.size() - done)) <= 0)
            return failed(out.errorString());  // ~QSaveFile removes the temporary file
    // commit() syncs too but ignores the result; a filesystem that allocates late reports a full disk only here.
    if (::fsync(out.handle()) != 0 && errno != EINVAL) return failed(QString::fromLocal8Bit(std::strerror(errno)));
    if (!out.commit()) return failed(out.errorString());
    return true;
}

}  // namespace ember::models
