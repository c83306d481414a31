// SPDX-License-Identifier: MIT
#include "catalog_list_model.h"

#include <cmath>

#include "ui/assign_if_changed.h"

namespace ember::desktop {

int CatalogListModel::rowCount(const QModelIndex& parent) const { return listRowCount(parent, m_rows); }

QHash<int, QByteArray> CatalogListModel::roleNames() const {
    return {{IdRole, "catalogId"},       {NameRole, "name"},         {RepoRole, "repo"},
            {CapabilitiesRole, "capabilities"}, {LicenseRole, "license"}, {NoteRole, "note"},
            {SizeRole, "sizeBytes"},     {StarterRole, "starter"},   {VerifiedRole, "verified"},
            {FitRole, "fit"},            {FitDetailRole, "fitDetail"}, {InLibraryRole, "inLibrary"},
            {DownloadingRole, "downloading"}};
}

QVariant CatalogListModel::data(const QModelIndex& index, int role) const {
    const models::CatalogEntry* row = rowAt(index, m_rows);
    if (!row) return {};
    const models::CatalogEntry& e = *row;
    const auto bytes = static_cast<uint64_t>(std::llround(e.approxGiB * 1073741824.0));
    auto fit = [&]() -> std::optional<models::FitReport> {
        if (bytes == 0 || m_memory.system_total == 0) return std::nullopt;
        models::FitInput in;
        in.weight_bytes = bytes;
        in.kv_bytes_per_position = e.memory.kvBytesPerPosition;
        in.draft_kv_bytes_per_position = e.memory.draftKvBytesPerPosition;
        in.recurrent_state_bytes = e.memory.recurrentStateBytes;
        in.recurrent_copies = 1 + e.memory.speculativeTokens;
        in.context = 4096;
        return models::estimate_fit(in, m_memory);
    };
    switch (role) {
        case IdRole: return e.id;
        case NameRole: return e.name;
        case RepoRole: return e.repo;
        case CapabilitiesRole: return e.capabilities;
        case LicenseRole: return e.license;
        case NoteRole: return e.note;
        case SizeRole: return static_cast<double>(bytes);
        case StarterRole: return e.starter;
        case VerifiedRole: return e.verified;
        case FitRole: {
            const auto r = fit();
            return r ? QString::fromUtf8(models::verdict_name(r->verdict)) : QStringLiteral("unknown");
        }
        case FitDetailRole: {
            const auto r = fit();
            return r ? QString::fromStdString(models::describe(*r)) : QString();
        }
        case InLibraryRole: return m_inLibrary.contains(e.id);
        case DownloadingRole: return m_downloading.contains(e.id);
        default: return {};
    }
}

void CatalogListModel::setCatalog(const models::Catalog& catalog, const models::MemoryBudget& memory) {
    m_catalog = catalog;
    m_memory = memory;
    refilter();
}

void CatalogListModel::setFilter(const QString& filter) {
    if (!assignIfChanged(m_filter, filter)) return;
    refilter();
    Q_EMIT filterChanged();
}

void CatalogListModel::refilter() {
    QList<models::CatalogEntry> rows = m_filter.trimmed().isEmpty() ? m_catalog.entries() : m_catalog.search(m_filter);
    // Starters first (smallest first), then the rest in catalog order.
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        if (a.starter != b.starter) return a.starter;
        return a.starter && a.approxGiB < b.approxGiB;
    });
    resetListRows(m_rows, std::move(rows));
}

void CatalogListModel::setState(const QSet<QString>& inLibrary, const QSet<QString>& downloading) {
    m_inLibrary = inLibrary;
    m_downloading = downloading;
    if (!m_rows.isEmpty()) Q_EMIT dataChanged(index(0), index(static_cast<int>(m_rows.size() - 1)));
}

QString CatalogListModel::starterId() const {
    const models::CatalogEntry* best = nullptr;
    for (const auto& e : m_catalog.entries())
        if (e.starter && (!best || e.approxGiB < best->approxGiB)) best = &e;
    return best ? best->id : QString();
}

}  // namespace ember::desktop

namespace ember::desktop {

double CatalogListModel::sizeOf(const QString& id) const {
    const models::CatalogEntry* e = m_catalog.find(id);
    return e ? e->approxGiB * 1073741824.0 : 0.0;
}

QString CatalogListModel::nameOf(const QString& id) const {
    const models::CatalogEntry* e = m_catalog.find(id);
    return e ? e->name : QString();
}

}  // namespace ember::desktop
