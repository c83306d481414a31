// SPDX-License-Identifier: MIT
#include "library.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QtConcurrent/QtConcurrentRun>

#include "catalog.h"
#include "ember/gguf.h"
#include "file_hasher.h"
#include "state_file.h"

namespace ember::models {

Q_LOGGING_CATEGORY(lcLibrary, "ember.models.library")

namespace {

constexpr qint64 kMaxStateBytes = 64ll << 20;
constexpr qint64 kMaxTemplateBytes = 4ll << 20;

QString statusReady() {
    return QString::fromLatin1(kStatusReady);
}
QString statusFailed() {
    return QString::fromLatin1(kStatusFailed);
}

// The hash a Hugging Face cache file is stored under: snapshots/<rev>/x is a link to blobs/<sha256 or git oid>.
void hashFromHfBlob(LibraryFile& f) {
    const QString target = QFileInfo(f.path).symLinkTarget();
    const QString blob = QFileInfo(target).fileName();
    static const QRegularExpression hex64(QStringLiteral("^[0-9a-f]{64}$")), hex40(QStringLiteral("^[0-9a-f]{40}$"));
    if (hex64.match(blob).hasMatch())
        f.sha256 = blob;
    else if (hex40.match(blob).hasMatch())
        f.gitOid = blob;
}

QString validateGgufFile(const QString& path) {
    try {
        gguf::File::open(path.toStdString());
        return {};
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
}

bool isModelFile(const QFileInfo& info) {
    return info.suffix().compare(QStringLiteral("gguf"), Qt::CaseInsensitive) == 0 &&
           roleForFileName(info.fileName()) == QString::fromLatin1(kRoleModel);
}

}  // namespace

Library::Library(QString folder, QString hfCacheFolder)
    : m_folder(QDir(folder).absolutePath()), m_hfCache(std::move(hfCacheFolder)) {}

QString Library::defaultFolder() {
    const QString env = qEnvironmentVariable("EMBER_MODELS_DIR");
    if (!env.isEmpty()) return env;
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) + QStringLiteral("/ember/models");
}

QString Library::defaultHfCacheFolder() {
    if (const QString v = qEnvironmentVariable("HF_HUB_CACHE"); !v.isEmpty()) return v;
    if (const QString v = qEnvironmentVariable("HF_HOME"); !v.isEmpty()) return v + QStringLiteral("/hub");
    return QDir::homePath() + QStringLiteral("/.cache/huggingface/hub");
}

QString Library::stateFile() const {
    return QDir(m_folder).filePath(QStringLiteral("library.json"));
}

bool Library::load(QString* error) {
    m_entries.clear();
    QFile file(stateFile());
    if (!file.exists()) return true;
    if (!file.open(QIODevice::ReadOnly) || file.size() > kMaxStateBytes) {
        if (error)
            *error = QStringLiteral("%1: cannot read the library state: %2")
                         .arg(stateFile(),
                              file.size() > kMaxStateBytes ? QStringLiteral("larger than 64 MiB") : file.errorString());
        return false;
    }
    QString why;
    if (!parseLibraryState(file.readAll(), m_folder, m_entries, why)) {
        if (error)
            *error = QStringLiteral("%1: not a library state file (%2); move it aside to start an empty library")
                         .arg(stateFile(), why);
        return false;
    }
    return true;
}

bool Library::save(QString* error) const {
    QDir().mkpath(m_folder);
    return writeStateFile(stateFile(), libraryStateJson(m_entries, m_folder), error);
}

void Library::upsert(const LibraryEntry& entry) {
    for (LibraryEntry& e : m_entries)
        if (e.id == entry.id) {
            e = entry;
            return;
        }
    m_entries.append(entry);
}

QList<LibraryEntry> Library::all() const {
    QList<LibraryEntry> out = m_entries;
    QStringList known;
    for (const LibraryEntry& e : m_entries)
        for (const LibraryFile& f : e.files) known.append(QFileInfo(f.path).absoluteFilePath());
    for (const QList<LibraryEntry>& found : {scanFolder(), scanHfCache()})
        for (const LibraryEntry& e : found)
            if (!known.contains(e.files.first().path)) out.append(e);
    return out;
}

std::optional<LibraryEntry> Library::find(const QString& idOrPath) const {
    const QList<LibraryEntry> entries = all();
    const QString asPath = QFileInfo(idOrPath).absoluteFilePath();
    for (const LibraryEntry& e : entries) {
        if (e.id == idOrPath) return e;
        for (const LibraryFile& f : e.files)
            if (f.path == asPath) return e;
    }
    std::optional<LibraryEntry> match;
    for (const LibraryEntry& e : entries)
        if (e.id.endsWith(idOrPath)) {
            if (match) return std::nullopt;  // ambiguous
            match = e;
        }
    return match;
}

bool Library::remove(const QString& id, QStringList* deleted, QString* error) {
    for (int i = 0; i < m_entries.size(); ++i) {
        const LibraryEntry& e = m_entries[i];
        if (e.id != id) continue;
        if (e.source == QStringLiteral("hub")) {
            const QString root = m_folder + QLatin1Char('/');
            for (const LibraryFile& f : e.files) {
                if (!QFileInfo(f.path).absoluteFilePath().startsWith(root)) continue;
                for (const QString& p :
                     {f.path, f.path + QStringLiteral(".part"), f.path + QStringLiteral(".part.json")})
                    if (QFile::exists(p)) {
                        if (!QFile::remove(p)) {
                            if (error) *error = QStringLiteral("%1: cannot delete").arg(p);
                            return false;
                        }
                        if (deleted) deleted->append(p);
                    }
            }
        }
        m_entries.removeAt(i);
        return true;
    }
    if (error) *error = QStringLiteral("%1: not in the library (%2)").arg(id, stateFile());
    return false;
}

QString Library::draftBeside(const QString& modelPath) {
    // A standalone draft (dflash*.gguf, *-draft*.gguf: catalog.h roleForFileName) for speculative decoding: the one
    // whose name shares the model's stem, else the only one in the folder.
    const QFileInfo model(modelPath);
    const QDir dir = model.absoluteDir();
    QStringList drafts;
    const QStringList ggufs =
        dir.entryList({QStringLiteral("*.gguf"), QStringLiteral("*.GGUF")}, QDir::Files, QDir::Name);
    for (const QString& name : ggufs)
        if (roleForFileName(name) == QLatin1String(kRoleDraft) && name != model.fileName()) drafts.append(name);
    drafts.removeDuplicates();
    QString draft = drafts.size() == 1 ? drafts.first() : QString();
    for (const QString& d : drafts)
        if (QFileInfo(d).completeBaseName().contains(model.completeBaseName(), Qt::CaseInsensitive)) draft = d;
    return draft.isEmpty() ? QString() : dir.absoluteFilePath(draft);
}

LibraryEntry Library::entryForLocalFile(const QString& modelPath, const QString& source) {
    const QFileInfo model(modelPath);
    LibraryEntry e;
    e.id = model.absoluteFilePath();
    e.source = source;
    e.added = QDateTime::currentDateTimeUtc();
    LibraryFile m;
    m.path = model.absoluteFilePath();
    m.role = QString::fromLatin1(kRoleModel);
    m.size = model.size();
    e.files.append(m);
    const QDir dir = model.absoluteDir();
    QStringList companions =
        dir.entryList({QStringLiteral("mmproj*.gguf"), QStringLiteral("MMPROJ*.gguf")}, QDir::Files, QDir::Name);
    companions.removeDuplicates();
    if (!companions.isEmpty()) {
        // With several projectors, prefer one whose name shares the model's stem, else the first.
        QString pick = companions.first();
        for (const QString& c : companions)
            if (model.completeBaseName().contains(QFileInfo(c).completeBaseName().mid(7), Qt::CaseInsensitive))
                pick = c;
        LibraryFile p;
        p.path = dir.absoluteFilePath(pick);
        p.role = QString::fromLatin1(kRoleProjector);
        p.size = QFileInfo(p.path).size();
        e.files.append(p);
    }
    if (const QString draft = Library::draftBeside(modelPath); !draft.isEmpty()) {
        LibraryFile f;
        f.path = draft;
        f.role = QString::fromLatin1(kRoleDraft);
        f.size = QFileInfo(f.path).size();
        e.files.append(f);
    }
    if (dir.exists(QStringLiteral("chat_template.jinja"))) {
        LibraryFile t;
        t.path = dir.absoluteFilePath(QStringLiteral("chat_template.jinja"));
        t.role = QString::fromLatin1(kRoleTemplate);
        t.size = QFileInfo(t.path).size();
        e.files.append(t);
    }
    return e;
}

QString Library::revealFolder(const LibraryEntry& entry) {
    return entry.files.isEmpty() ? QString() : QFileInfo(entry.files.first().path).absolutePath();
}

QList<LibraryEntry> Library::scanFolder() const {
    QList<LibraryEntry> out;
    QDirIterator it(m_folder, {QStringLiteral("*.gguf")}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QFileInfo info(it.next());
        if (isModelFile(info)) out.append(entryForLocalFile(info.absoluteFilePath(), QStringLiteral("folder")));
    }
    return out;
}

QList<LibraryEntry> Library::scanHfCache() const {
    QList<LibraryEntry> out;
    const QDir cache(m_hfCache);
    for (const QString& repoDir : cache.entryList({QStringLiteral("models--*")}, QDir::Dirs)) {
        const QStringList parts = repoDir.mid(8).split(QStringLiteral("--"));
        const QString repo = parts.join(QLatin1Char('/'));
        QDirIterator it(cache.filePath(repoDir + QStringLiteral("/snapshots")), {QStringLiteral("*.gguf")}, QDir::Files,
                        QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QFileInfo info(it.next());
            if (!isModelFile(info)) continue;
            LibraryEntry e = entryForLocalFile(info.absoluteFilePath(), QStringLiteral("hf-cache"));
            e.repo = repo;
            for (LibraryFile& f : e.files) hashFromHfBlob(f);
            out.append(e);
        }
    }
    return out;
}

ModelSummary summarize(const LibraryEntry& entry) {
    ModelSummary s;
    s.entry = entry;
    bool thinking = false, vision = false;
    for (const LibraryFile& f : entry.files) {
        try {
            if (f.role == QString::fromLatin1(kRoleModel)) {
                const gguf::File file = gguf::File::open(f.path.toStdString());
                s.facts = read_model_facts(file);
                thinking = thinking || s.facts.thinking_template;
                for (const auto& [type, bytes] : s.facts.quant_types) s.quantTypes.append(QString::fromStdString(type));
            } else if (f.role == QString::fromLatin1(kRoleProjector)) {
                const gguf::File file = gguf::File::open(f.path.toStdString());
                const ModelFacts projector = read_model_facts(file);
                vision = projector.vision_projector && f.status != statusFailed();
                s.projectorBytes = static_cast<qint64>(projector.weight_bytes);
            } else if (f.role == QString::fromLatin1(kRoleTemplate)) {
                QFile t(f.path);
                if (t.open(QIODevice::ReadOnly))
                    thinking = thinking || template_has_thinking(t.read(kMaxTemplateBytes).toStdString());
            }
        } catch (const std::exception& e) {
            if (f.role == QString::fromLatin1(kRoleModel)) s.factsError = QString::fromStdString(e.what());
        }
    }
    if (thinking) s.capabilities.append(QStringLiteral("thinking"));
    if (vision) s.capabilities.append(QStringLiteral("vision"));
    if (s.facts.drafted) s.capabilities.append(QStringLiteral("drafted"));
    if (s.facts.mtp) s.capabilities.append(QStringLiteral("mtp"));
    return s;
}

LibraryEntry verifyEntry(LibraryEntry entry) {
    for (LibraryFile& f : entry.files) {
        f.error.clear();
        const QFileInfo info(f.path);
        if (!info.exists()) {
            f.status = statusFailed();
            f.error = QStringLiteral("%1: the file is missing").arg(f.path);
            continue;
        }
        if (f.size >= 0 && info.size() != f.size) {
            f.status = statusFailed();
            f.error = QStringLiteral("%1: size is %2 bytes, expected %3").arg(f.path).arg(info.size()).arg(f.size);
            continue;
        }
        f.size = info.size();
        if (entry.source == QStringLiteral("hf-cache") && f.sha256.isEmpty() && f.gitOid.isEmpty()) hashFromHfBlob(f);
        QString error;
        if (!f.sha256.isEmpty() || f.gitOid.isEmpty()) {
            const QString hex = hashFile(f.path, HashKind::Sha256, &error);
            if (hex.isEmpty()) {
                f.status = statusFailed();
                f.error = error;
                continue;
            }
            if (!f.sha256.isEmpty() && hex != f.sha256) {
                f.status = statusFailed();
                f.error = QStringLiteral("%1: sha256 mismatch: expected %2, got %3").arg(f.path, f.sha256, hex);
                continue;
            }
            f.sha256 = hex;  // a local file without a reference hash: record it for the next verify
        } else {
            const QString hex = hashFile(f.path, HashKind::GitBlobSha1, &error);
            if (hex != f.gitOid) {
                f.status = statusFailed();
                f.error = hex.isEmpty()
                              ? error
                              : QStringLiteral("%1: git oid mismatch: expected %2, got %3").arg(f.path, f.gitOid, hex);
                continue;
            }
        }
        if (f.path.endsWith(QStringLiteral(".gguf"), Qt::CaseInsensitive)) {
            const QString invalid = validateGgufFile(f.path);
            if (!invalid.isEmpty()) {
                f.status = statusFailed();
                f.error = QStringLiteral("GGUF validation failed: ") + invalid;
                continue;
            }
        }
        f.status = statusReady();
    }
    return entry;
}

QFuture<ModelSummary> summarizeAsync(const LibraryEntry& entry) {
    return QtConcurrent::run(summarize, entry);
}

QFuture<LibraryEntry> verifyAsync(const LibraryEntry& entry) {
    return QtConcurrent::run(verifyEntry, entry);
}

LibraryEntry importModel(const QString& path) {
    LibraryEntry entry = Library::entryForLocalFile(path, QStringLiteral("import"));
    for (LibraryFile& f : entry.files) f.sha256.clear();
    return verifyEntry(entry);
}

}  // namespace ember::models
