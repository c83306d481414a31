// SPDX-License-Identifier: MIT
// ember-models fit PATH|ID: the memory a model needs at --context against this machine's memory.
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

#include "fit_estimate.h"
#include "memory_info.h"
#include "models_cli.h"

namespace ember::models::cli {

int runFit(const Options& options, const QStringList& args) {
    if (args.size() != 1) {
        err() << "usage: ember-models fit PATH|ID [--context N]" << Qt::endl;
        return 2;
    }
    Library library(options.modelsDir);
    if (!loadLibrary(options, library)) return 1;
    std::optional<LibraryEntry> entry = library.find(args.first());
    if (!entry && QFileInfo(args.first()).isFile()) entry = Library::entryForLocalFile(args.first(), QStringLiteral("folder"));
    if (!entry) {
        err() << args.first() << ": no such file and no such model in " << library.stateFile() << Qt::endl;
        return 1;
    }
    const ModelSummary s = summarize(*entry);
    if (!s.factsError.isEmpty()) {
        err() << s.factsError << Qt::endl;
        return 1;
    }
    const FitReport report = estimate_fit(fit_input(s.facts, options.context, static_cast<uint64_t>(s.projectorBytes)),
                                          probe_memory());
    if (options.json) {
        const QJsonObject o{{QStringLiteral("verdict"), QString::fromStdString(std::string(verdict_name(report.verdict)))},
                            {QStringLiteral("context"), static_cast<qint64>(options.context)},
                            {QStringLiteral("total"), static_cast<qint64>(report.total)},
                            {QStringLiteral("weights"), static_cast<qint64>(report.weights)},
                            {QStringLiteral("draft_weights"), static_cast<qint64>(report.draft_weights)},
                            {QStringLiteral("projector"), static_cast<qint64>(report.projector)},
                            {QStringLiteral("kv_cache"), static_cast<qint64>(report.kv_cache)},
                            {QStringLiteral("draft_kv_cache"), static_cast<qint64>(report.draft_kv_cache)},
                            {QStringLiteral("recurrent_state"), static_cast<qint64>(report.recurrent_state)},
                            {QStringLiteral("capacity"), static_cast<qint64>(report.capacity)},
                            {QStringLiteral("against_gpu"), report.against_gpu}};
        out() << QJsonDocument(o).toJson(QJsonDocument::Compact) << Qt::endl;
    } else {
        out() << entry->id << " at " << options.context << " tokens\n  " << QString::fromStdString(describe(report))
              << Qt::endl;
    }
    return 0;
}

}  // namespace ember::models::cli
