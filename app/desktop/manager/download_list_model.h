// SPDX-License-Identifier: MIT
// The downloads page's rows: one per download job (a catalog unit), with its progress, speed, time left and
// state; finished and failed jobs stay listed until cleared.
#pragma once

#include <QtQml/qqmlregistration.h>

#include "ui/counted_list_model.h"


namespace ember::desktop {

struct DownloadRow {
    QString catalogId;
    QString name;
    QString repo;
    QString state = QStringLiteral("queued");  // queued, running, paused, done, failed, cancelled
    QString error;
    QString currentFile;
    qint64 received = 0;
    qint64 total = 0;
    double bytesPerSecond = 0;
    qint64 etaSeconds = -1;
    int fileIndex = 0;
    int fileCount = 0;
};

class DownloadListModel : public CountedListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("The model manager owns the downloads")
    Q_PROPERTY(int activeCount READ activeCount NOTIFY countChanged)

public:
    enum Role {
        IdRole = Qt::UserRole + 1,
        NameRole,
        RepoRole,
        StateRole,
        ErrorRole,
        CurrentFileRole,
        ReceivedRole,
        TotalRole,
        FractionRole,
        SpeedRole,
        EtaRole,
        FileIndexRole,
        FileCountRole,
    };

    using CountedListModel::CountedListModel;
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;
    int activeCount() const;

    int rowOf(const QString& catalogId) const;
    void upsert(const DownloadRow& row);
    void remove(const QString& catalogId);
    const DownloadRow* row(const QString& catalogId) const;
    Q_INVOKABLE QString idAt(int row) const;

private:
    QList<DownloadRow> m_rows;
};

}  // namespace ember::desktop
