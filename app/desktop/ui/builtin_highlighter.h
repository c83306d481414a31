// SPDX-License-Identifier: MIT
// A small syntax highlighter for the languages models write most (C, C++, C#, Java, JavaScript, TypeScript,
// Rust, Go, Python, shell, JSON, SQL, YAML, Lua): keywords, types, literals, strings, numbers, comments (line and
// block), function calls. Used where KDE's KSyntaxHighlighting (KF6) is not available, as on Debian 12.
#pragma once

#include <QSet>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

namespace ember::desktop {

struct LanguageRules {
    QString name;
    QSet<QString> keywords;
    QSet<QString> types;
    QSet<QString> literals;
    QString lineComment;  // "//", "#", "--"; empty: none
    QString blockOpen, blockClose;
    QString quotes = QStringLiteral("\"'");
    bool tripleQuotes = false;  // Python's """ and '''
    bool caseInsensitive = false;  // SQL
};

// The rules for a code block's language tag ("py", "C++", "ts", ...), or nullptr for an unknown language.
const LanguageRules* languageRules(const QString& tag);

class BuiltinHighlighter : public QSyntaxHighlighter {
public:
    BuiltinHighlighter(QTextDocument* document, const LanguageRules* rules, bool dark);
    void setDark(bool dark);

    enum class Token { Keyword, Type, Literal, String, Number, Comment, Function };
    QTextCharFormat formatFor(Token token) const;

protected:
    void highlightBlock(const QString& text) override;

private:
    enum State { Normal = -1, InBlockComment = 1, InTripleDouble = 2, InTripleSingle = 3 };
    qsizetype scanString(const QString& text, qsizetype from, QChar quote) const;
    bool isKeyword(const QSet<QString>& set, const QString& word) const;

    const LanguageRules* m_rules;
    bool m_dark;
};

}  // namespace ember::desktop
