// SPDX-License-Identifier: MIT
// The model manager as the window uses it: the catalog (what Ember suggests), the downloads (resumable, verified
// jobs from app/models), and the library (what is on disk), with import, verify, remove and reveal. Network I/O
// runs on the GUI thread through Qt's asynchronous API; every library operation that touches the disk (scan,
// summaries, hashing, saving library.json) runs in order on one worker thread, reloading the library from disk
// first, so that two operations never overwrite each other's result.
#pragma once

#include <QHash>
#include <QNetworkAccessManager>
#include <QObject>
#include <QThreadPool>
#include <QtQml/qqmlregistration.h>
#include <functional>

#include "catalog_list_model.h"
#include "download_list_model.h"
#include "hub_client.h"
#include "library_list_model.h"

namespace ember::models {
class DownloadJob;
}

namespace ember::desktop {

class ModelManager : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("The application creates the model manager")
    Q_PROPERTY(ember::desktop::CatalogListModel* catalog READ catalog CONSTANT)
    Q_PROPERTY(ember::desktop::DownloadListModel* downloads READ downloads CONSTANT)
    Q_PROPERTY(ember::desktop::LibraryListModel* library READ library CONSTANT)
    Q_PROPERTY(QString folder READ folder CONSTANT)
    Q_PROPERTY(bool offline READ offline CONSTANT)
    Q_PROPERTY(bool busy READ busy NOTIFY busyChanged)
    Q_PROPERTY(bool libraryLoaded READ libraryLoaded NOTIFY libraryChanged)
    Q_PROPERTY(QString notice READ notice NOTIFY noticeChanged)

public:
    // `folder`: the library folder (empty: Library::defaultFolder()).
    explicit ModelManager(const QString& folder, bool offline, QObject* parent = nullptr);
    ~ModelManager() override;

    CatalogListModel* catalog() { return &m_catalog; }
    DownloadListModel* downloads() { return &m_downloads; }
    LibraryListModel* library() { return &m_library; }
    QString folder() const { return m_folder; }
    bool offline() const { return m_offline; }
    bool busy() const { return m_pending > 0; }
    bool libraryLoaded() const { return m_libraryLoaded; }
    QString notice() const { return m_notice; }

    Q_INVOKABLE void refreshLibrary();
    Q_INVOKABLE void download(const QString& catalogId);
    Q_INVOKABLE void pauseDownload(const QString& catalogId);
    Q_INVOKABLE void resumeDownload(const QString& catalogId);
    Q_INVOKABLE void cancelDownload(const QString& catalogId);
    Q_INVOKABLE void clearDownload(const QString& catalogId);
    Q_INVOKABLE void importModel(const QString& pathOrUrl);
    Q_INVOKABLE void verify(const QString& entryId);
    Q_INVOKABLE void remove(const QString& entryId);
    Q_INVOKABLE void reveal(const QString& entryId);
    // Pairs another vision projector file with an entry's model (empty: none); the next load of the model uses it.
    Q_INVOKABLE void setProjector(const QString& entryId, const QString& pathOrUrl);
    // The projector paired with the library entry of a model file (empty: none recorded; the engine then looks
    // beside the model).
    Q_INVOKABLE QString projectorFor(const QString& modelPath) const;
    Q_INVOKABLE QString starterId() const { return m_catalog.starterId(); }
    Q_INVOKABLE void clearNotice();

Q_SIGNALS:
    void busyChanged();
    void libraryChanged();
    void noticeChanged();
    void downloadFinished(const QString& catalogId, const QString& modelPath, bool ok);
    void imported(const QString& modelPath, bool ok);

private:
    struct LibraryResult {
        QList<models::ModelSummary> summaries;
        QString error;
        QString modelPath;  // the operation's model file, when it has one
        bool ok = true;
    };
    // Runs `change` on the worker with the library freshly loaded from disk, saves it when `change` returns true,
    // then summarizes every entry; `done` gets the result on the GUI thread.
    void mutateLibrary(std::function<bool(models::Library&, LibraryResult&)> change,
                       std::function<void(const LibraryResult&)> done = {});
    void onJobFinished(const QString& catalogId, bool ok);
    // Sets the listed state of a running job's row; the job, or nullptr when there is no such job or row.
    models::DownloadJob* showDownloadState(const QString& catalogId, const QString& state);
    void updateCatalogState();
    void setNotice(const QString& notice);

    QString m_folder;
    bool m_offline;
    models::HubSettings m_hub;
    QNetworkAccessManager m_network;
    QThreadPool m_io;  // one thread: library operations run in order
    CatalogListModel m_catalog;
    DownloadListModel m_downloads;
    LibraryListModel m_library;
    QHash<QString, models::DownloadJob*> m_jobs;
    int m_pending = 0;
    bool m_libraryLoaded = false;
    QString m_notice;
};

}  // namespace ember::desktop
