// SPDX-License-Identifier: MIT
// How ember-models shows library entries: one JSON object per entry (--json) or a few readable lines.
#pragma once

#include <QJsonObject>
#include <QString>
#include <QTextStream>

#include "library.h"

namespace ember::models::cli {

QJsonObject entryJson(const ModelSummary& summary);
void printEntry(QTextStream& stream, const ModelSummary& summary);
QString humanBytes(qint64 bytes);

}  // namespace ember::models::cli
