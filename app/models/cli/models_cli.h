// SPDX-License-Identifier: MIT
// ember-models: the command-line front of the model manager. One function per command; the dispatcher in
// ember_models.cpp parses the global options. Exit codes: 0 done, 1 a check or a download failed, 2 usage.
#pragma once

#include <QString>
#include <QStringList>
#include <QTextStream>

#include "catalog.h"
#include "hub_client.h"
#include "library.h"

namespace ember::models::cli {

struct Options {
    QString modelsDir;
    QString hfCacheDir;
    QString catalogFile;  // empty: the built-in catalog
    HubSettings hub;
    bool json = false;
    bool progress = false;  // progress lines on stderr (default: when stderr is a terminal)
    quint64 context = 32768;
};

// Every failure goes to stderr as one line naming the file or URL.
QTextStream& err();
QTextStream& out();

// Whether a command got between min_args and max_args arguments (max_args -1: no limit); if not, prints
// "usage: ember-models SYNOPSIS" and the command returns 2.
bool checkArguments(const QStringList& args, qsizetype min_args, qsizetype max_args, const char* synopsis);
// Loads the catalog the options name; on failure prints the error and returns false.
bool loadCatalog(const Options& options, Catalog& catalog);
// Loads the library; on failure prints the error and returns false.
bool loadLibrary(const Options& options, Library& library);

int runList(const Options& options, const QStringList& args);
int runSearch(const Options& options, const QStringList& args);
int runPull(const Options& options, const QStringList& args);
int runVerify(const Options& options, const QStringList& args);
int runRemove(const Options& options, const QStringList& args);
int runImport(const Options& options, const QStringList& args);
int runFit(const Options& options, const QStringList& args);

}  // namespace ember::models::cli
