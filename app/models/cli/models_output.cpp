// SPDX-License-Identifier: MIT
#include "models_output.h"

#include <QJsonArray>

#include "fit_estimate.h"

namespace ember::models::cli {

QString humanBytes(qint64 bytes) {
    return QString::fromStdString(format_bytes(static_cast<uint64_t>(std::max<qint64>(bytes, 0))));
}

QJsonObject entryJson(const ModelSummary& s) {
    QJsonObject o;
    o.insert(QStringLiteral("id"), s.entry.id);
    o.insert(QStringLiteral("source"), s.entry.source);
    if (!s.entry.repo.isEmpty()) o.insert(QStringLiteral("repo"), s.entry.repo);
    if (!s.entry.catalogId.isEmpty()) o.insert(QStringLiteral("catalog_id"), s.entry.catalogId);
    o.insert(QStringLiteral("ready"), s.entry.ready());
    o.insert(QStringLiteral("capabilities"), QJsonArray::fromStringList(s.capabilities));
    o.insert(QStringLiteral("quant_types"), QJsonArray::fromStringList(s.quantTypes));
    o.insert(QStringLiteral("architecture"), QString::fromStdString(s.facts.architecture));
    o.insert(QStringLiteral("context_length"), static_cast<qint64>(s.facts.context_length));
    o.insert(QStringLiteral("weight_bytes"), static_cast<qint64>(s.facts.weight_bytes));
    if (!s.factsError.isEmpty()) o.insert(QStringLiteral("read_error"), s.factsError);
    o.insert(QStringLiteral("folder"), Library::revealFolder(s.entry));
    QJsonArray files;
    for (const LibraryFile& f : s.entry.files) {
        QJsonObject fo;
        fo.insert(QStringLiteral("path"), f.path);
        fo.insert(QStringLiteral("role"), f.role);
        fo.insert(QStringLiteral("size"), f.size);
        fo.insert(QStringLiteral("status"), f.status);
        if (!f.sha256.isEmpty()) fo.insert(QStringLiteral("sha256"), f.sha256);
        if (!f.gitOid.isEmpty()) fo.insert(QStringLiteral("git_oid"), f.gitOid);
        if (!f.error.isEmpty()) fo.insert(QStringLiteral("error"), f.error);
        files.append(fo);
    }
    o.insert(QStringLiteral("files"), files);
    return o;
}

void printEntry(QTextStream& stream, const ModelSummary& s) {
    qint64 size = 0;
    for (const LibraryFile& f : s.entry.files) size += std::max<qint64>(f.size, 0);
    stream << s.entry.id << "\n";
    stream << "  status        " << (s.entry.ready() ? "ready" : "not ready") << " (" << s.entry.source << ")\n";
    stream << "  size          " << humanBytes(size) << "\n";
    if (!s.factsError.isEmpty())
        stream << "  read error    " << s.factsError << "\n";
    else {
        stream << "  architecture  " << QString::fromStdString(s.facts.architecture) << "\n";
        stream << "  quant types   " << s.quantTypes.join(QStringLiteral(", ")) << "\n";
        stream << "  context       " << s.facts.context_length << "\n";
    }
    stream << "  capabilities  "
           << (s.capabilities.isEmpty() ? QStringLiteral("-") : s.capabilities.join(QStringLiteral(", "))) << "\n";
    for (const LibraryFile& f : s.entry.files) {
        stream << "  " << f.role.leftJustified(17) << " " << f.status << "  " << f.path << "\n";
        if (!f.error.isEmpty()) stream << "                    " << f.error << "\n";
    }
}

}  // namespace ember::models::cli
