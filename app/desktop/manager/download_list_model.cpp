// SPDX-License-Identifier: MIT
#include "download_list_model.h"

namespace ember::desktop {

int DownloadListModel::rowCount(const QModelIndex& parent) const { return listRowCount(parent, m_rows); }

QHash<int, QByteArray> DownloadListModel::roleNames() const {
    return {{IdRole, "catalogId"},   {NameRole, "name"},     {RepoRole, "repo"},
            {StateRole, "downloadState"}, {ErrorRole, "error"},   {CurrentFileRole, "currentFile"},
            {ReceivedRole, "received"}, {TotalRole, "total"}, {FractionRole, "fraction"},
            {SpeedRole, "bytesPerSecond"}, {EtaRole, "etaSeconds"}, {FileIndexRole, "fileIndex"},
            {FileCountRole, "fileCount"}};
}

QVariant DownloadListModel::data(const QModelIndex& index, int role) const {
    const DownloadRow* row = rowAt(index, m_rows);
    if (!row) return {};
    const DownloadRow& r = *row;
    switch (role) {
        case IdRole: return r.catalogId;
        case NameRole: return r.name;
        case RepoRole: return r.repo;
        case StateRole: return r.state;
        case ErrorRole: return r.error;
        case CurrentFileRole: return r.currentFile;
        case ReceivedRole: return static_cast<double>(r.received);
        case TotalRole: return static_cast<double>(r.total);
        case FractionRole: return r.total > 0 ? static_cast<double>(r.received) / static_cast<double>(r.total) : 0.0;
        case SpeedRole: return r.bytesPerSecond;
        case EtaRole: return static_cast<double>(r.etaSeconds);
        case FileIndexRole: return r.fileIndex;
        case FileCountRole: return r.fileCount;
        default: return {};
    }
}

int DownloadListModel::activeCount() const {
    int n = 0;
    for (const DownloadRow& r : m_rows)
        if (r.state == QLatin1String("running") || r.state == QLatin1String("queued") ||
            r.state == QLatin1String("paused"))
            ++n;
    return n;
}

int DownloadListModel::rowOf(const QString& catalogId) const {
    for (qsizetype i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].catalogId == catalogId) return static_cast<int>(i);
    return -1;
}

const DownloadRow* DownloadListModel::row(const QString& catalogId) const {
    const int i = rowOf(catalogId);
    return i < 0 ? nullptr : &m_rows[i];
}

QString DownloadListModel::idAt(int row) const {
    return row >= 0 && row < m_rows.size() ? m_rows[row].catalogId : QString();
}

void DownloadListModel::upsert(const DownloadRow& row) {
    const int i = rowOf(row.catalogId);
    if (i >= 0) {
        const bool stateChanged = m_rows[i].state != row.state;
        m_rows[i] = row;
        Q_EMIT dataChanged(index(i), index(i));
        if (stateChanged) Q_EMIT countChanged();  // activeCount may have changed
        return;
    }
    insertListRow(m_rows, 0, row);
}

void DownloadListModel::remove(const QString& catalogId) {
    removeListRow(m_rows, rowOf(catalogId));
}

}  // namespace ember::desktop
