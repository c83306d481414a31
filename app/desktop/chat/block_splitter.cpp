// SPDX-License-Identifier: MIT
#include "block_splitter.h"

#include <algorithm>

namespace ember::desktop {

namespace {

// The line without up to three leading spaces (more make an indented code block, never a fence).
QStringView fenceView(QStringView line) {
    qsizetype i = 0;
    while (i < 3 && i < line.size() && line[i] == QLatin1Char(' ')) ++i;
    return line.mid(i);
}

bool isFenceChar(QChar c) {
    return c == QLatin1Char('`') || c == QLatin1Char('~');
}

qsizetype runLength(QStringView t) {
    qsizetype n = 0;
    while (n < t.size() && t[n] == t[0]) ++n;
    return n;
}

bool isBlank(QStringView line) {
    return std::all_of(line.begin(), line.end(), [](QChar c) { return c.isSpace(); });
}

// After a blank line, whether `line` continues the paragraph's construct (a list item, indented continuation, a
// quote or table) rather than starting a new block. Needs only the first character, so a streamed line can be
// decided as soon as it starts.
bool continuesAfterBlank(QChar first) {
    return first == QLatin1Char(' ') || first == QLatin1Char('\t') || first.isDigit() ||
           QStringView(u"-*+>|").contains(first);
}

}  // namespace

BlockSplitter::Change BlockSplitter::append(QStringView text) {
    Change change{m_blocks.size(), m_blocks.size()};
    qsizetype start = 0;
    while (start <= text.size()) {
        const qsizetype nl = text.indexOf(QLatin1Char('\n'), start);
        if (nl < 0) {
            m_line += text.mid(start);
            showPartial(change.firstChanged);
            break;
        }
        m_line += text.mid(start, nl - start);
        processLine(m_line, true, change.firstChanged);
        m_line.clear();
        m_shown = 0;
        start = nl + 1;
    }
    return change;
}

BlockSplitter::Change BlockSplitter::finish() {
    Change change{m_blocks.size(), m_blocks.size()};
    if (!m_line.isEmpty()) {
        processLine(m_line, false, change.firstChanged);
        m_line.clear();
        m_shown = 0;
    }
    closeLast(change.firstChanged);
    m_inCode = false;
    m_blankPending = false;
    return change;
}

QList<TextBlock> BlockSplitter::split(QStringView text) {
    BlockSplitter s;
    s.append(text);
    s.finish();
    return s.m_blocks;
}

void BlockSplitter::appendToLast(TextBlock::Kind kind, QStringView text, qsizetype& firstChanged,
                                 const QString& language) {
    if (text.isEmpty()) return;
    if (m_blocks.isEmpty() || m_blocks.last().closed || m_blocks.last().kind != kind)
        m_blocks.append(TextBlock{kind, {}, language, false});
    m_blocks.last().text += text;
    firstChanged = std::min(firstChanged, m_blocks.size() - 1);
}

void BlockSplitter::closeLast(qsizetype& firstChanged) {
    if (m_blocks.isEmpty() || m_blocks.last().closed) return;
    TextBlock& b = m_blocks.last();
    b.closed = true;
    if (b.kind == TextBlock::Kind::Code) {
        if (b.text.endsWith(QLatin1Char('\n'))) b.text.chop(1);
    } else {
        while (!b.text.isEmpty() && b.text.back().isSpace()) b.text.chop(1);
    }
    firstChanged = std::min(firstChanged, m_blocks.size() - 1);
}

void BlockSplitter::showPartial(qsizetype& firstChanged) {
    const QStringView line(m_line);
    if (m_shown == 0) {
        const QStringView t = fenceView(line);
        if (t.isEmpty() || isBlank(line)) return;  // blank so far: it may stay blank
        if (isFenceChar(t[0])) {
            const qsizetype run = runLength(t);
            if (m_inCode) {
                // A closing fence: fence characters, then only spaces. Hold while it may still be one.
                if (t[0] == m_fenceChar && isBlank(t.mid(run))) return;
            } else if (run == t.size() || run >= 3) {
                return;  // may still become (or already is) an opening fence: wait for the line's end
            }
        }
        if (!m_inCode && m_blankPending) {
            m_blankPending = false;
            if (continuesAfterBlank(line[0]))
                appendToLast(TextBlock::Kind::Text, u"\n", firstChanged);
            else
                closeLast(firstChanged);
        }
    }
    appendToLast(m_inCode ? TextBlock::Kind::Code : TextBlock::Kind::Text, line.mid(m_shown), firstChanged);
    m_shown = line.size();
}

void BlockSplitter::processLine(QStringView line, bool complete, qsizetype& firstChanged) {
    const QStringView ending = complete ? QStringView(u"\n") : QStringView();
    if (m_shown > 0) {  // the line's start is on screen: the decisions were made then
        appendToLast(m_inCode ? TextBlock::Kind::Code : TextBlock::Kind::Text, line.mid(m_shown), firstChanged);
        if (complete) appendToLast(m_inCode ? TextBlock::Kind::Code : TextBlock::Kind::Text, ending, firstChanged);
        return;
    }
    const QStringView t = fenceView(line);
    if (m_inCode) {
        if (!t.isEmpty() && t[0] == m_fenceChar) {
            const qsizetype run = runLength(t);
            if (run >= m_fenceLength && isBlank(t.mid(run))) {
                closeLast(firstChanged);
                m_inCode = false;
                return;
            }
        }
        appendToLast(TextBlock::Kind::Code, line, firstChanged);
        appendToLast(TextBlock::Kind::Code, ending, firstChanged);
        return;
    }
    if (!t.isEmpty() && isFenceChar(t[0])) {
        const qsizetype run = runLength(t);
        const QStringView info = t.mid(run).trimmed();
        if (run >= 3 && !(t[0] == QLatin1Char('`') && info.contains(QLatin1Char('`')))) {
            closeLast(firstChanged);
            m_blankPending = false;
            m_inCode = true;
            m_fenceChar = t[0];
            m_fenceLength = run;
            const qsizetype space = info.indexOf(QLatin1Char(' '));
            const QString language = (space < 0 ? info : info.left(space)).toString().toLower();
            m_blocks.append(TextBlock{TextBlock::Kind::Code, {}, language, false});
            firstChanged = std::min(firstChanged, m_blocks.size() - 1);
            return;
        }
    }
    if (isBlank(line)) {
        if (!m_blocks.isEmpty() && !m_blocks.last().closed && m_blocks.last().kind == TextBlock::Kind::Text)
            m_blankPending = true;
        return;
    }
    if (m_blankPending) {
        m_blankPending = false;
        if (continuesAfterBlank(line[0]))
            appendToLast(TextBlock::Kind::Text, u"\n", firstChanged);
        else
            closeLast(firstChanged);
    }
    appendToLast(TextBlock::Kind::Text, line, firstChanged);
    appendToLast(TextBlock::Kind::Text, ending, firstChanged);
}

}  // namespace ember::desktop
