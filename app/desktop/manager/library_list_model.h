// SPDX-License-Identifier: MIT
// The library page's rows: the models on disk (downloaded, imported, found in the folder or the Hugging Face
// cache) with what their files say about themselves and whether they are verified.
#pragma once

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

#include "library.h"

namespace ember::desktop {

class LibraryListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("The model manager owns the library")
    Q_PROPERTY(int count READ count NOTIFY countChanged)

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

    explicit LibraryListModel(QObject* parent = nullptr);
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;
    int count() const { return rowCount(); }

    void setSummaries(const QList<models::ModelSummary>& summaries);
    const QList<models::ModelSummary>& summaries() const { return m_rows; }
    Q_INVOKABLE QString pathAt(int row) const;
    Q_INVOKABLE QString idAt(int row) const;

Q_SIGNALS:
    void countChanged();

private:
    QList<models::ModelSummary> m_rows;
};

}  // namespace ember::desktop
