// SPDX-License-Identifier: MIT
#include "builtin_highlighter.h"

#include <QHash>

#include "ui/assign_if_changed.h"

namespace ember::desktop {

namespace {

QSet<QString> words(const QString& list) {
    QSet<QString> out;
    for (const QString& w : list.split(QLatin1Char(' '), Qt::SkipEmptyParts)) out.insert(w);
    return out;
}

QSet<QString> words(const char* list) {
    return words(QString::fromLatin1(list));
}

const char* const kCKeywords =
    "auto break case const continue default do else enum extern for goto if inline register restrict return "
    "sizeof static struct switch typedef union volatile while";
const char* const kCTypes =
    "void char short int long float double signed unsigned bool size_t int8_t int16_t int32_t int64_t uint8_t "
    "uint16_t uint32_t uint64_t";

QList<LanguageRules> buildRules() {
    QList<LanguageRules> all;
    auto add = [&](LanguageRules r) { all.append(std::move(r)); };
    const QString slash = QStringLiteral("//"), hash = QStringLiteral("#");
    const QString open = QStringLiteral("/*"), close = QStringLiteral("*/");
    add({QStringLiteral("c"), words(kCKeywords), words(kCTypes), words("NULL true false"), slash, open, close});
    add({QStringLiteral("cpp"),
         words(QString::fromLatin1(kCKeywords) +
               QStringLiteral(" alignas alignof catch class concept consteval constexpr constinit co_await co_return "
                              "co_yield decltype delete explicit export friend mutable namespace new noexcept "
                              "operator override private protected public requires static_assert template this "
                              "throw try typename using virtual final import module")),
         words(QString::fromLatin1(kCTypes) + QStringLiteral(" std string vector map unique_ptr shared_ptr optional "
                                                             "wchar_t char8_t char16_t char32_t")),
         words("nullptr true false NULL"), slash, open, close});
    add({QStringLiteral("csharp"),
         words("abstract as base break case catch checked class const continue default delegate do else enum event "
               "explicit extern finally fixed for foreach goto if implicit in interface internal is lock namespace "
               "new operator out override params private protected public readonly ref return sealed sizeof "
               "stackalloc static struct switch this throw try typeof unchecked unsafe using virtual volatile while "
               "async await var record init get set"),
         words("bool byte char decimal double float int long object sbyte short string uint ulong ushort void"),
         words("true false null"), slash, open, close});
    add({QStringLiteral("java"),
         words("abstract assert break case catch class const continue default do else enum extends final finally "
               "for goto if implements import instanceof interface native new package private protected public "
               "return static strictfp super switch synchronized this throw throws transient try volatile while var "
               "record"),
         words("boolean byte char double float int long short void String Integer Object List Map"),
         words("true false null"), slash, open, close});
    const char* const jsKeywords =
        "async await break case catch class const continue debugger default delete do else export extends finally "
        "for function if import in instanceof let new of return static super switch this throw try typeof var void "
        "while with yield from as";
    add({QStringLiteral("javascript"), words(jsKeywords), words("Array Object String Number Boolean Promise Map Set"),
         words("true false null undefined NaN Infinity"), slash, open, close, QStringLiteral("\"'`")});
    add({QStringLiteral("typescript"),
         words(QString::fromLatin1(jsKeywords) +
               QStringLiteral(" interface type enum implements namespace declare readonly keyof abstract private "
                              "protected public satisfies")),
         words("string number boolean any unknown never void object Array Promise Record Partial"),
         words("true false null undefined"), slash, open, close, QStringLiteral("\"'`")});
    add({QStringLiteral("rust"),
         words("as async await break const continue crate dyn else enum extern fn for if impl in let loop match "
               "mod move mut pub ref return self Self static struct super trait type unsafe use where while"),
         words("i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char str String Vec Option Result "
               "Box"),
         words("true false None Some Ok Err"), slash, open, close, QStringLiteral("\"")});
    add({QStringLiteral("go"),
         words("break case chan const continue default defer else fallthrough for func go goto if import interface "
               "map package range return select struct switch type var"),
         words("bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint "
               "uint8 uint16 uint32 uint64 uintptr any"),
         words("true false nil iota"), slash, open, close, QStringLiteral("\"'`")});
    LanguageRules python{QStringLiteral("python"),
                         words("and as assert async await break class continue def del elif else except finally "
                               "for from global if import in is lambda nonlocal not or pass raise return try while "
                               "with yield match case"),
                         words("int float str bool list dict set tuple bytes object type print len range self cls"),
                         words("True False None"),
                         hash};
    python.tripleQuotes = true;
    add(python);
    add({QStringLiteral("bash"),
         words("if then else elif fi case esac for while until do done in function return local export readonly "
               "declare set unset shift exit break continue source alias"),
         words("echo cd ls grep sed awk cat printf test read mkdir rm cp mv chmod sudo apt pip git make cmake"),
         words("true false"), hash});
    add({QStringLiteral("json"), {}, {}, words("true false null"), {}, {}, {}, QStringLiteral("\"")});
    LanguageRules sql{QStringLiteral("sql"),
                      words("select from where and or not insert into values update set delete create table drop "
                            "alter index primary key foreign references join left right inner outer on group by "
                            "order having limit offset as distinct union all case when then else end is in like "
                            "between exists begin commit rollback transaction view with"),
                      words("integer int text real blob varchar char boolean date timestamp numeric bigint"),
                      words("null true false"),
                      QStringLiteral("--"),
                      open,
                      close};
    sql.caseInsensitive = true;
    add(sql);
    add({QStringLiteral("yaml"), {}, {}, words("true false null yes no on off"), hash});
    add({QStringLiteral("lua"),
         words("and break do else elseif end for function goto if in local not or repeat return then until while"),
         {}, words("true false nil"), QStringLiteral("--")});
    return all;
}

const QHash<QString, QString>& aliases() {
    static const QHash<QString, QString> map = {
        {QStringLiteral("h"), QStringLiteral("c")},          {QStringLiteral("c++"), QStringLiteral("cpp")},
        {QStringLiteral("cc"), QStringLiteral("cpp")},       {QStringLiteral("cxx"), QStringLiteral("cpp")},
        {QStringLiteral("hpp"), QStringLiteral("cpp")},      {QStringLiteral("cs"), QStringLiteral("csharp")},
        {QStringLiteral("c#"), QStringLiteral("csharp")},    {QStringLiteral("js"), QStringLiteral("javascript")},
        {QStringLiteral("jsx"), QStringLiteral("javascript")}, {QStringLiteral("mjs"), QStringLiteral("javascript")},
        {QStringLiteral("ts"), QStringLiteral("typescript")}, {QStringLiteral("tsx"), QStringLiteral("typescript")},
        {QStringLiteral("rs"), QStringLiteral("rust")},      {QStringLiteral("golang"), QStringLiteral("go")},
        {QStringLiteral("py"), QStringLiteral("python")},    {QStringLiteral("python3"), QStringLiteral("python")},
        {QStringLiteral("sh"), QStringLiteral("bash")},      {QStringLiteral("shell"), QStringLiteral("bash")},
        {QStringLiteral("zsh"), QStringLiteral("bash")},     {QStringLiteral("console"), QStringLiteral("bash")},
        {QStringLiteral("yml"), QStringLiteral("yaml")},     {QStringLiteral("jsonc"), QStringLiteral("json")},
        {QStringLiteral("sqlite"), QStringLiteral("sql")},   {QStringLiteral("postgresql"), QStringLiteral("sql")},
    };
    return map;
}

bool isIdentifierStart(QChar c) {
    return c.isLetter() || c == QLatin1Char('_');
}

bool isIdentifierPart(QChar c) {
    return c.isLetterOrNumber() || c == QLatin1Char('_');
}

}  // namespace

const LanguageRules* languageRules(const QString& tag) {
    static const QList<LanguageRules> rules = buildRules();
    QString name = tag.trimmed().toLower();
    name = aliases().value(name, name);
    for (const LanguageRules& r : rules)
        if (r.name == name) return &r;
    return nullptr;
}

BuiltinHighlighter::BuiltinHighlighter(QTextDocument* document, const LanguageRules* rules, bool dark)
    : QSyntaxHighlighter(document), m_rules(rules), m_dark(dark) {}

void BuiltinHighlighter::setDark(bool dark) {
    if (!assignIfChanged(m_dark, dark)) return;
    rehighlight();
}

QTextCharFormat BuiltinHighlighter::formatFor(Token token) const {
    // Two palettes with enough contrast on the code block's background (light: #f6f8fa-ish, dark: #1e2227-ish).
    struct Style {
        const char* light;
        const char* dark;
        bool bold;
        bool italic;
    };
    static const Style styles[] = {
        {"#a626a4", "#c678dd", true, false},   // keyword
        {"#0b7285", "#56b6c2", false, false},  // type
        {"#b35900", "#d19a66", false, false},  // literal
        {"#2b8a3e", "#98c379", false, false},  // string
        {"#b35900", "#d19a66", false, false},  // number
        {"#6a737d", "#7f848e", false, true},   // comment
        {"#1c5fb8", "#61afef", false, false},  // function
    };
    const Style& s = styles[static_cast<int>(token)];
    QTextCharFormat f;
    f.setForeground(QColor(QString::fromLatin1(m_dark ? s.dark : s.light)));
    if (s.bold) f.setFontWeight(QFont::DemiBold);
    f.setFontItalic(s.italic);
    return f;
}

bool BuiltinHighlighter::isKeyword(const QSet<QString>& set, const QString& word) const {
    return set.contains(m_rules->caseInsensitive ? word.toLower() : word);
}

qsizetype BuiltinHighlighter::scanString(const QString& text, qsizetype from, QChar quote) const {
    qsizetype i = from + 1;
    while (i < text.size()) {
        if (text[i] == QLatin1Char('\\')) {
            i += 2;
            continue;
        }
        if (text[i] == quote) return i + 1;
        ++i;
    }
    return text.size();  // unterminated: to the end of the line
}

void BuiltinHighlighter::highlightBlock(const QString& text) {
    setCurrentBlockState(Normal);
    if (!m_rules) return;
    qsizetype i = 0;
    const int previous = previousBlockState();
    // Continue a construct that the previous line left open.
    if (previous == InBlockComment || previous == InTripleDouble || previous == InTripleSingle) {
        const QString close = previous == InBlockComment   ? m_rules->blockClose
                              : previous == InTripleDouble ? QStringLiteral("\"\"\"")
                                                           : QStringLiteral("'''");
        const qsizetype end = text.indexOf(close);
        const Token token = previous == InBlockComment ? Token::Comment : Token::String;
        if (end < 0) {
            setFormat(0, static_cast<int>(text.size()), formatFor(token));
            setCurrentBlockState(previous);
            return;
        }
        i = end + close.size();
        setFormat(0, static_cast<int>(i), formatFor(token));
    }
    while (i < text.size()) {
        const QChar c = text[i];
        const QStringView rest = QStringView(text).mid(i);
        if (!m_rules->lineComment.isEmpty() && rest.startsWith(m_rules->lineComment)) {
            setFormat(static_cast<int>(i), static_cast<int>(text.size() - i), formatFor(Token::Comment));
            return;
        }
        if (!m_rules->blockOpen.isEmpty() && rest.startsWith(m_rules->blockOpen)) {
            const qsizetype end = text.indexOf(m_rules->blockClose, i + m_rules->blockOpen.size());
            const qsizetype stop = end < 0 ? text.size() : end + m_rules->blockClose.size();
            setFormat(static_cast<int>(i), static_cast<int>(stop - i), formatFor(Token::Comment));
            if (end < 0) {
                setCurrentBlockState(InBlockComment);
                return;
            }
            i = stop;
            continue;
        }
        if (m_rules->tripleQuotes && (rest.startsWith(u"\"\"\"") || rest.startsWith(u"'''"))) {
            const QString delim = rest.left(3).toString();
            const qsizetype end = text.indexOf(delim, i + 3);
            const qsizetype stop = end < 0 ? text.size() : end + 3;
            setFormat(static_cast<int>(i), static_cast<int>(stop - i), formatFor(Token::String));
            if (end < 0) {
                setCurrentBlockState(delim.startsWith(QLatin1Char('"')) ? InTripleDouble : InTripleSingle);
                return;
            }
            i = stop;
            continue;
        }
        if (m_rules->quotes.contains(c)) {
            const qsizetype stop = scanString(text, i, c);
            setFormat(static_cast<int>(i), static_cast<int>(stop - i), formatFor(Token::String));
            i = stop;
            continue;
        }
        if (c.isDigit()) {
            qsizetype j = i;
            while (j < text.size() && (text[j].isLetterOrNumber() || text[j] == QLatin1Char('.') ||
                                       text[j] == QLatin1Char('_')))
                ++j;
            setFormat(static_cast<int>(i), static_cast<int>(j - i), formatFor(Token::Number));
            i = j;
            continue;
        }
        if (isIdentifierStart(c)) {
            qsizetype j = i;
            while (j < text.size() && isIdentifierPart(text[j])) ++j;
            const QString word = text.mid(i, j - i);
            qsizetype k = j;
            while (k < text.size() && text[k] == QLatin1Char(' ')) ++k;
            if (isKeyword(m_rules->keywords, word))
                setFormat(static_cast<int>(i), static_cast<int>(j - i), formatFor(Token::Keyword));
            else if (isKeyword(m_rules->literals, word))
                setFormat(static_cast<int>(i), static_cast<int>(j - i), formatFor(Token::Literal));
            else if (isKeyword(m_rules->types, word))
                setFormat(static_cast<int>(i), static_cast<int>(j - i), formatFor(Token::Type));
            else if (k < text.size() && text[k] == QLatin1Char('('))
                setFormat(static_cast<int>(i), static_cast<int>(j - i), formatFor(Token::Function));
            i = j;
            continue;
        }
        ++i;
    }
}

}  // namespace ember::desktop
