// SPDX-License-Identifier: MIT
// Syntax highlighting for a QML TextEdit's document: `CodeHighlighter { textDocument: edit.textDocument;
// language: "python"; dark: Theme.dark }`. Uses KDE's KSyntaxHighlighting (KF6) when the build found it, else the
// built-in highlighter.
#pragma once

#include <QObject>
#include <QPointer>
#include <QQuickTextDocument>
#include <QSyntaxHighlighter>
#include <QtQml/qqmlregistration.h>

namespace ember::desktop {

class CodeHighlighter : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QQuickTextDocument* textDocument READ textDocument WRITE setTextDocument NOTIFY textDocumentChanged)
    Q_PROPERTY(QString language READ language WRITE setLanguage NOTIFY languageChanged)
    Q_PROPERTY(bool dark READ dark WRITE setDark NOTIFY darkChanged)
    Q_PROPERTY(bool active READ active NOTIFY activeChanged)  // a highlighter is attached (the language is known)
    Q_PROPERTY(QString implementation READ implementation CONSTANT)

public:
    explicit CodeHighlighter(QObject* parent = nullptr);
    ~CodeHighlighter() override;

    QQuickTextDocument* textDocument() const { return m_document; }
    void setTextDocument(QQuickTextDocument* document);
    QString language() const { return m_language; }
    void setLanguage(const QString& language);
    bool dark() const { return m_dark; }
    void setDark(bool dark);
    bool active() const { return m_highlighter != nullptr; }
    static QString implementation();  // "KSyntaxHighlighting" or "built-in"

Q_SIGNALS:
    void textDocumentChanged();
    void languageChanged();
    void darkChanged();
    void activeChanged();

private:
    void rebuild();

    QPointer<QQuickTextDocument> m_document;
    QString m_language;
    bool m_dark = false;
    QPointer<QSyntaxHighlighter> m_highlighter;
};

}  // namespace ember::desktop
