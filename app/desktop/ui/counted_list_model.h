// SPDX-License-Identifier: MIT
// The base of the app's list models: the `count` property QML binds to, and the row bookkeeping of the models
// that keep their rows in a QList (insert, remove, replace, each announcing the new count).
#pragma once

#include <QAbstractListModel>
#include <QList>
#include <QtQml/qqmlregistration.h>

namespace ember::desktop {

class CountedListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ANONYMOUS
    Q_PROPERTY(int count READ count NOTIFY countChanged)

public:
    using QAbstractListModel::QAbstractListModel;
    int count() const;

Q_SIGNALS:
    void countChanged();

protected:
    template <typename Row>
    static int listRowCount(const QModelIndex& parent, const QList<Row>& rows) {
        return parent.isValid() ? 0 : static_cast<int>(rows.size());
    }
    // The row an index of data() points at; nullptr when it is out of range.
    template <typename Row>
    static const Row* rowAt(const QModelIndex& index, const QList<Row>& rows) {
        return index.isValid() && index.row() < rows.size() ? &rows[index.row()] : nullptr;
    }
    template <typename Row>
    void insertListRow(QList<Row>& rows, int at, const Row& row) {
        beginInsertRows({}, at, at);
        rows.insert(at, row);
        endInsertRows();
        Q_EMIT countChanged();
    }
    // Out-of-range rows (rowOf's -1 included) are ignored.
    template <typename Row>
    void removeListRow(QList<Row>& rows, int row) {
        if (row < 0 || row >= rows.size()) return;
        beginRemoveRows({}, row, row);
        rows.removeAt(row);
        endRemoveRows();
        Q_EMIT countChanged();
    }
    template <typename Row>
    void resetListRows(QList<Row>& rows, QList<Row> replacement) {
        beginResetModel();
        rows = std::move(replacement);
        endResetModel();
        Q_EMIT countChanged();
    }
};

}  // namespace ember::desktop
