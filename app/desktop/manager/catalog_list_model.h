// SPDX-License-Identifier: MIT
// The catalog page's rows: each suggested model with its size, capabilities, license, whether it would fit in
// this machine's memory, and whether it is already in the library or downloading.
#pragma once

#include <QSet>
#include <QtQml/qqmlregistration.h>

#include "catalog.h"
#include "fit_estimate.h"
#include "ui/counted_list_model.h"

namespace ember::desktop {

class CatalogListModel : public CountedListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("The model manager owns the catalog")
    Q_PROPERTY(QString filter READ filter WRITE setFilter NOTIFY filterChanged)

public:
    enum Role {
        IdRole = Qt::UserRole + 1,
        NameRole,
        RepoRole,
        CapabilitiesRole,
        LicenseRole,
        NoteRole,
        SizeRole,  // bytes (approximate, from the catalog)
        StarterRole,
        VerifiedRole,
        FitRole,        // "fits", "tight", "won't fit", "unknown"
        FitDetailRole,  // one line with the numbers
        InLibraryRole,
        DownloadingRole,
    };

    using CountedListModel::CountedListModel;
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;
    QString filter() const { return m_filter; }
    void setFilter(const QString& filter);

    void setCatalog(const models::Catalog& catalog, const models::MemoryBudget& memory);
    void setState(const QSet<QString>& inLibrary, const QSet<QString>& downloading);
    const models::CatalogEntry* entry(const QString& id) const { return m_catalog.find(id); }
    Q_INVOKABLE QString starterId() const;  // the smallest starter model
    Q_INVOKABLE double sizeOf(const QString& id) const;  // approximate bytes, 0 when unknown
    Q_INVOKABLE QString nameOf(const QString& id) const;

Q_SIGNALS:
    void filterChanged();

private:
    void refilter();
    models::Catalog m_catalog;
    models::MemoryBudget m_memory;
    QList<models::CatalogEntry> m_rows;
    QString m_filter;
    QSet<QString> m_inLibrary;
    QSet<QString> m_downloading;
};

}  // namespace ember::desktop
