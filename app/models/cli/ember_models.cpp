// SPDX-License-Identifier: MIT
// ember-models [OPTIONS] COMMAND [ARGS]: list, search, pull, verify, rm, import and fit, headless.
#include <unistd.h>
#include <QCoreApplication>
#include <QLoggingCategory>

#include "ember_version.h"
#include "models_cli.h"

namespace ember::models::cli {

QTextStream& err() {
    static QTextStream stream(stderr);
    return stream;
}

QTextStream& out() {
    static QTextStream stream(stdout);
    return stream;
}

bool loadCatalog(const Options& options, Catalog& catalog) {
    QString error;
    catalog = options.catalogFile.isEmpty() ? Catalog::builtIn() : Catalog::fromFile(options.catalogFile, &error);
    if (!error.isEmpty()) {
        err() << error << Qt::endl;
        return false;
    }
    return true;
}

bool checkArguments(const QStringList& args, qsizetype min_args, qsizetype max_args, const char* synopsis) {
    if (args.size() >= min_args && (max_args < 0 || args.size() <= max_args)) return true;
    err() << "usage: ember-models " << synopsis << Qt::endl;
    return false;
}

bool loadLibrary(const Options& options, Library& library) {
    library = Library(options.modelsDir, options.hfCacheDir);
    QString error;
    if (!library.load(&error)) {
        err() << error << Qt::endl;
        return false;
    }
    return true;
}

namespace {

const char* kUsage = R"(usage: ember-models [OPTIONS] COMMAND [ARGS]

commands:
  list                    models on disk: status, size, quant types, context, capabilities
  search QUERY            models in the catalog
  pull REPO|ID [FILE...]  download a unit (the catalog's files, or the FILEs named), verified and resumable
  verify PATH|ID          re-hash and validate a model's files
  rm ID|PATH              forget a model (deleting the files Ember downloaded)
  import PATH...          add local .gguf files (companions in the same folder are paired)
  fit PATH|ID             will it fit: memory needed at --context against this machine

options:
  --models-dir DIR        the library folder ($EMBER_MODELS_DIR)
  --hf-cache DIR          a Hugging Face cache to read ($HF_HUB_CACHE)
  --mirror URL            hub base URL instead of https://huggingface.co ($EMBER_HUB_URL, $HF_ENDPOINT)
  --token TOKEN           hub token ($HF_TOKEN)
  --catalog FILE          a catalog file instead of the built-in one ($EMBER_CATALOG)
  --context N             context length for fit (default 32768)
  --stall-timeout SEC     abort and retry a transfer that receives nothing for SEC seconds (default 60)
  --retries N             retries per file after a drop (default 5)
  --retry-base-ms MS      first backoff delay, doubled on each retry (default 1000)
  --max-waste BYTES       give a file up once this many received bytes were thrown away by restarts
                          (default: the file's size, at least 16 MiB)
  --progress              print progress lines to stderr (default when stderr is a terminal)
  --json                  machine-readable output
  --version               print the version
)";

int usage() {
    err() << kUsage;
    err().flush();
    return 2;
}

}  // namespace

}  // namespace ember::models::cli

int main(int argc, char** argv) {
    using namespace ember::models::cli;
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("ember-models"));
    if (qEnvironmentVariableIsEmpty("QT_LOGGING_RULES"))
        QLoggingCategory::setFilterRules(QStringLiteral("*.debug=false"));

    Options options;
    options.modelsDir = ember::models::Library::defaultFolder();
    options.hfCacheDir = ember::models::Library::defaultHfCacheFolder();
    options.catalogFile = qEnvironmentVariable("EMBER_CATALOG");
    for (const char* env : {"EMBER_HUB_URL", "HF_ENDPOINT"})
        if (const QString v = qEnvironmentVariable(env); !v.isEmpty() && options.hub.baseUrl.host() == "huggingface.co")
            options.hub.baseUrl = QUrl(v);
    options.hub.token = qEnvironmentVariable("HF_TOKEN");
    options.progress = isatty(STDERR_FILENO);

    QStringList args = app.arguments().mid(1);
    QStringList rest;
    for (int i = 0; i < args.size(); ++i) {
        const QString& a = args[i];
        auto value = [&](QString& into) {
            if (i + 1 >= args.size()) return false;
            into = args[++i];
            return true;
        };
        QString v;
        bool ok = true;
        if (a == "--json")
            options.json = true;
        else if (a == "--progress")
            options.progress = true;
        else if (a == "--no-progress")
            options.progress = false;
        else if (a == "--models-dir")
            ok = value(options.modelsDir);
        else if (a == "--hf-cache")
            ok = value(options.hfCacheDir);
        else if (a == "--catalog")
            ok = value(options.catalogFile);
        else if (a == "--token")
            ok = value(options.hub.token);
        else if (a == "--mirror") {
            ok = value(v);
            options.hub.baseUrl = QUrl(v);
            ok = ok && options.hub.baseUrl.isValid() && options.hub.baseUrl.scheme().startsWith("http");
        } else if (a == "--context") {
            ok = value(v);
            options.context = v.toULongLong(&ok);
        } else if (a == "--stall-timeout") {
            ok = value(v);
            const double s = v.toDouble(&ok);
            options.hub.stallTimeoutMs = static_cast<int>(s * 1000);
            ok = ok && s > 0 && s < 86400;
        } else if (a == "--retries") {
            ok = value(v);
            options.hub.maxRetries = v.toInt(&ok);
            ok = ok && options.hub.maxRetries >= 0 && options.hub.maxRetries <= 1000;
        } else if (a == "--retry-base-ms") {
            ok = value(v);
            options.hub.retryBaseMs = v.toInt(&ok);
            ok = ok && options.hub.retryBaseMs >= 0 && options.hub.retryBaseMs <= 600000;
        } else if (a == "--max-waste") {
            ok = value(v);
            options.hub.maxWastedBytes = v.toLongLong(&ok);
            ok = ok && options.hub.maxWastedBytes > 0;
        } else if (a == "-h" || a == "--help") {
            out() << kUsage;
            out().flush();
            return 0;
        } else if (a == "--version") {
            out() << "ember-models " << EMBER_VERSION << Qt::endl;
            return 0;
        } else if (a.startsWith("--") && rest.isEmpty()) {
            err() << "ember-models: unknown option '" << a << "'" << Qt::endl;
            return usage();
        } else
            rest.append(a);
        if (!ok) {
            err() << "ember-models: option '" << a << "' needs a valid value" << Qt::endl;
            return 2;
        }
    }
    if (rest.isEmpty()) return usage();
    const QString command = rest.takeFirst();
    const struct {
        const char* name;
        int (*run)(const Options&, const QStringList&);
    } commands[] = {{"list", runList}, {"search", runSearch}, {"pull", runPull}, {"verify", runVerify},
                    {"rm", runRemove}, {"import", runImport}, {"fit", runFit}};
    for (const auto& c : commands)
        if (command == QLatin1String(c.name)) {
            const int code = c.run(options, rest);
            out().flush();
            err().flush();
            return code;
        }
    err() << "ember-models: unknown command '" << command << "'" << Qt::endl;
    return usage();
}
