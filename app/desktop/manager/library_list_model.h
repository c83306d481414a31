// SPDX-License-Identifier: MIT
// The library page's rows: the models on disk (downloaded, imported, found in the folder or the Hugging Face
// cache) with what their files say about themselves and whether they are verified.
#pragma once

#include <QtQml/qqmlregistration.h>

#include "library.h"
#include "ui/counted_list_model.h"

namespace ember::desktop {

class LibraryListModel : public CountedListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("The model manager owns the library")

public:
    enum Role {
        IdRole = Qt::UserRole + 1,
        NameRole,
        PathRole,  // the model file
        SizeRole,
        QuantRole,
        ArchitectureRole,
        ContextRole,
        CapabilitiesRole,
        StatusRole,  // ready, unverified, failed
        ErrorRole,
        SourceRole,
        CatalogIdRole,
        HasProjectorRole,
        ProjectorRole,  // the paired projector file (empty: none)
    };

    using CountedListModel::CountedListModel;
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    void setSummaries(const QList<models::ModelSummary>& summaries);
    const QList<models::ModelSummary>& summaries() const { return m_rows; }
    Q_INVOKABLE QString pathAt(int row) const;
    Q_INVOKABLE QString idAt(int row) const;

private:
    QList<models::ModelSummary> m_rows;
};

}  // namespace ember::desktop
