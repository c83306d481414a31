// SPDX-License-Identifier: MIT
// The model library: what is on disk. Models downloaded or imported by Ember are recorded in <folder>/library.json
// with each file's role, size, hash and status; files found in the folder or in the Hugging Face cache layout
// (models--owner--name/snapshots/<rev>/...) are shown too, as not yet verified. Companions in a model's folder (an
// mmproj*.gguf, a standalone draft, a chat_template.jinja) are paired with it automatically.
//
// Why a JSON file rather than QSettings: entries are nested (files with roles, hashes and statuses), the file sits
// beside the models so that the folder describes itself when moved, and it is replaced atomically (state_file.h).
//
// The library never deletes a file it did not download into its own folder, and never marks a file ready unless
// its hash matched and, for GGUF, the engine's validator accepted it.
#pragma once

#include <QDateTime>
#include <QFuture>
#include <QList>
#include <QString>
#include <QStringList>
#include <optional>

#include "library_state.h"
#include "model_facts.h"

namespace ember::models {

// A library entry with what its files say about themselves.
struct ModelSummary {
    LibraryEntry entry;
    ModelFacts facts;           // of the model file
    QString factsError;         // when the model file could not be read
    qint64 projectorBytes = 0;  // tensor bytes of a paired vision projector
    QStringList capabilities;   // "thinking", "vision", "drafted", "mtp": read from the files
    QStringList quantTypes;     // largest first
};

class Library {
public:
    explicit Library(QString folder, QString hfCacheFolder = defaultHfCacheFolder());

    static QString defaultFolder();         // $EMBER_MODELS_DIR or <data>/ember/models
    static QString defaultHfCacheFolder();  // $HF_HUB_CACHE, $HF_HOME/hub or ~/.cache/huggingface/hub

    const QString& folder() const { return m_folder; }
    QString stateFile() const;

    // load: an absent file is an empty library; an unreadable or malformed one is an error naming the file.
    bool load(QString* error);
    // Replaces the file atomically: on failure (a full disk) the previous version stays and `error` says why.
    bool save(QString* error) const;

    const QList<LibraryEntry>& recorded() const { return m_entries; }
    // Recorded entries plus models found in the folder and the Hugging Face cache that are not recorded.
    QList<LibraryEntry> all() const;
    // By id, by the path of any of its files, or by a unique suffix of the id.
    std::optional<LibraryEntry> find(const QString& idOrPath) const;

    void upsert(const LibraryEntry& entry);
    // Forgets the entry; deletes its files when Ember downloaded them into its own folder. Returns the deleted paths.
    bool remove(const QString& id, QStringList* deleted, QString* error);

    // A local model file with its companions from the same folder, ready to record (status unverified).
    static LibraryEntry entryForLocalFile(const QString& modelPath, const QString& source);
    // The standalone DFlash draft paired with a model file by its folder (empty when there is none).
    static QString draftBeside(const QString& modelPath);
    // The folder to reveal in a file manager for an entry (the app opens it; the library has no GUI).
    static QString revealFolder(const LibraryEntry& entry);

private:
    QList<LibraryEntry> scanFolder() const;
    QList<LibraryEntry> scanHfCache() const;

    QString m_folder;
    QString m_hfCache;
    QList<LibraryEntry> m_entries;
};

// Reads the model facts and capabilities of an entry's files (opens each GGUF; no hashing). Blocking but cheap:
// a GUI calls summarizeAsync.
ModelSummary summarize(const LibraryEntry& entry);
QFuture<ModelSummary> summarizeAsync(const LibraryEntry& entry);

// The "Verify" action: re-hashes every file (against the recorded or hub hash; the blob name in the Hugging Face
// cache), validates GGUF files, and returns the entry with updated statuses. Blocking: use verifyAsync on a GUI.
LibraryEntry verifyEntry(LibraryEntry entry);
QFuture<LibraryEntry> verifyAsync(const LibraryEntry& entry);

// "Import": validates the file, hashes it, pairs companions in its folder. Blocking.
LibraryEntry importModel(const QString& path);

}  // namespace ember::models
