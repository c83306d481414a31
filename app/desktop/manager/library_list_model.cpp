// SPDX-License-Identifier: MIT
#include "library_list_model.h"

#include <QFileInfo>

#include "catalog.h"

namespace ember::desktop {

namespace {

const models::LibraryFile* modelFile(const models::LibraryEntry& e) {
    const models::LibraryFile* f = e.fileWithRole(QString::fromLatin1(models::kRoleModel));
    return f ? f : (e.files.isEmpty() ? nullptr : &e.files.first());
}

QString entryStatus(const models::LibraryEntry& e) {
    bool unverified = false;
    for (const models::LibraryFile& f : e.files) {
        if (f.status == QLatin1String(models::kStatusFailed)) return QString::fromLatin1(models::kStatusFailed);
        if (f.status != QLatin1String(models::kStatusReady)) unverified = true;
    }
    return QString::fromLatin1(unverified ? models::kStatusUnverified : models::kStatusReady);
}

}  // namespace

int LibraryListModel::rowCount(const QModelIndex& parent) const { return listRowCount(parent, m_rows); }

QHash<int, QByteArray> LibraryListModel::roleNames() const {
    return {{IdRole, "entryId"},
            {NameRole, "name"},
            {PathRole, "path"},
            {SizeRole, "sizeBytes"},
            {QuantRole, "quant"},
            {ArchitectureRole, "architecture"},
            {ContextRole, "contextLength"},
            {CapabilitiesRole, "capabilities"},
            {StatusRole, "status"},
            {ErrorRole, "error"},
            {SourceRole, "source"},
            {CatalogIdRole, "catalogId"},
            {HasProjectorRole, "hasProjector"},
            {ProjectorRole, "projector"}};
}

QVariant LibraryListModel::data(const QModelIndex& index, int role) const {
    const models::ModelSummary* row = rowAt(index, m_rows);
    if (!row) return {};
    const models::ModelSummary& s = *row;
    const models::LibraryFile* f = modelFile(s.entry);
    switch (role) {
        case IdRole: return s.entry.id;
        case NameRole: {
            const QString name = QString::fromStdString(s.facts.name);
            return name.isEmpty() && f ? QFileInfo(f->path).completeBaseName() : name;
        }
        case PathRole: return f ? f->path : QString();
        case SizeRole: {
            double total = 0;
            for (const auto& file : s.entry.files) total += static_cast<double>(std::max<qint64>(0, file.size));
            return total > 0 ? total : static_cast<double>(s.facts.file_bytes);
        }
        case QuantRole: return s.quantTypes.isEmpty() ? QString() : s.quantTypes.first().toUpper();
        case ArchitectureRole: return QString::fromStdString(s.facts.architecture);
        case ContextRole: return static_cast<double>(s.facts.context_length);
        case CapabilitiesRole: return s.capabilities;
        case StatusRole: return entryStatus(s.entry);
        case ErrorRole: {
            if (!s.factsError.isEmpty()) return s.factsError;
            for (const auto& file : s.entry.files)
                if (!file.error.isEmpty()) return file.error;
            return QString();
        }
        case SourceRole: return s.entry.source;
        case CatalogIdRole: return s.entry.catalogId;
        case HasProjectorRole: return s.entry.fileWithRole(QString::fromLatin1(models::kRoleProjector)) != nullptr;
        case ProjectorRole: {
            const models::LibraryFile* p = s.entry.fileWithRole(QString::fromLatin1(models::kRoleProjector));
            return p ? p->path : QString();
        }
        default: return {};
    }
}

void LibraryListModel::setSummaries(const QList<models::ModelSummary>& summaries) {
    resetListRows(m_rows, summaries);
}

QString LibraryListModel::pathAt(int row) const {
    if (row < 0 || row >= m_rows.size()) return {};
    const models::LibraryFile* f = modelFile(m_rows[row].entry);
    return f ? f->path : QString();
}

QString LibraryListModel::idAt(int row) const {
    return row >= 0 && row < m_rows.size() ? m_rows[row].entry.id : QString();
}

}  // namespace ember::desktop
