// SPDX-License-Identifier: MIT
#include "code_highlighter.h"

#include <QTextDocument>

#include "builtin_highlighter.h"
#include "ui/assign_if_changed.h"

#ifdef EMBER_HAVE_KSYNTAXHIGHLIGHTING
#include <KSyntaxHighlighting/Definition>
#include <KSyntaxHighlighting/Repository>
#include <KSyntaxHighlighting/SyntaxHighlighter>
#include <KSyntaxHighlighting/Theme>
#endif

namespace ember::desktop {

#ifdef EMBER_HAVE_KSYNTAXHIGHLIGHTING
namespace {
// Loading the definitions reads hundreds of files: once per process. Read-only after construction.
KSyntaxHighlighting::Repository& repository() {
    static KSyntaxHighlighting::Repository repo;
    return repo;
}
}  // namespace
#endif

CodeHighlighter::CodeHighlighter(QObject* parent) : QObject(parent) {}

CodeHighlighter::~CodeHighlighter() {
    delete m_highlighter;
}

QString CodeHighlighter::implementation() {
#ifdef EMBER_HAVE_KSYNTAXHIGHLIGHTING
    return QStringLiteral("KSyntaxHighlighting");
#else
    return QStringLiteral("built-in");
#endif
}

void CodeHighlighter::setTextDocument(QQuickTextDocument* document) {
    if (!assignIfChanged(m_document, document)) return;
    rebuild();
    Q_EMIT textDocumentChanged();
}

void CodeHighlighter::setLanguage(const QString& language) {
    if (!assignIfChanged(m_language, language)) return;
    rebuild();
    Q_EMIT languageChanged();
}

void CodeHighlighter::setDark(bool dark) {
    if (!assignIfChanged(m_dark, dark)) return;
    rebuild();
    Q_EMIT darkChanged();
}

void CodeHighlighter::rebuild() {
    const bool wasActive = active();
    delete m_highlighter;
    m_highlighter = nullptr;
    QTextDocument* doc = m_document ? m_document->textDocument() : nullptr;
    if (doc && !m_language.isEmpty()) {
#ifdef EMBER_HAVE_KSYNTAXHIGHLIGHTING
        auto& repo = repository();
        KSyntaxHighlighting::Definition definition = repo.definitionForName(m_language);
        if (!definition.isValid()) definition = repo.definitionForFileName(QStringLiteral("code.") + m_language);
        if (definition.isValid()) {
            auto* h = new KSyntaxHighlighting::SyntaxHighlighter(doc);
            h->setTheme(repo.defaultTheme(m_dark ? KSyntaxHighlighting::Repository::DarkTheme
                                                 : KSyntaxHighlighting::Repository::LightTheme));
            h->setDefinition(definition);
            m_highlighter = h;
        }
#endif
        if (!m_highlighter) {
            if (const LanguageRules* rules = languageRules(m_language))
                m_highlighter = new BuiltinHighlighter(doc, rules, m_dark);
        }
    }
    if (wasActive != active()) Q_EMIT activeChanged();
}

}  // namespace ember::desktop
