// SPDX-License-Identifier: MIT
// Splits an answer's Markdown into display blocks as it streams: fenced code blocks (``` or ~~~, with their
// language) and text blocks, a text block ending at a blank line before a new paragraph. Each block is rendered
// by its own delegate, so a new token re-lays out only the block it lands in, never the whole message.
//
// Streaming and one-shot splitting give the same blocks: append() may be called with any pieces. A line that
// could still turn into a fence (it starts with ` or ~) is held back until it is complete.
#pragma once

#include <QList>
#include <QString>
#include <QStringView>

namespace ember::desktop {

struct TextBlock {
    enum class Kind { Text, Code };
    Kind kind = Kind::Text;
    QString text;      // Markdown source (text) or the code itself (code), without the fences
    QString language;  // code: the info string's first word ("python"), maybe empty
    bool closed = false;  // no more text will arrive in this block
    bool operator==(const TextBlock&) const = default;
};

class BlockSplitter {
public:
    // What append() changed: blocks [firstChanged, countBefore) changed text, blocks [countBefore, count) are new.
    struct Change {
        qsizetype firstChanged = 0;
        qsizetype countBefore = 0;
    };

    Change append(QStringView text);
    Change finish();  // the end of the message: holds nothing back, closes the last block
    const QList<TextBlock>& blocks() const { return m_blocks; }
    qsizetype count() const { return m_blocks.size(); }

    static QList<TextBlock> split(QStringView text);  // one shot

private:
    void processLine(QStringView line, bool complete, qsizetype& firstChanged);
    void appendToLast(TextBlock::Kind kind, QStringView text, qsizetype& firstChanged, const QString& language = {});
    void closeLast(qsizetype& firstChanged);
    void showPartial(qsizetype& firstChanged);

    QList<TextBlock> m_blocks;
    QString m_line;         // the current line, not yet ended by a newline
    qsizetype m_shown = 0;  // how much of m_line is already in the last block
    bool m_inCode = false;
    QChar m_fenceChar;
    qsizetype m_fenceLength = 0;
    bool m_blankPending = false;  // a blank line ended the last text paragraph; the next line decides
};

}  // namespace ember::desktop
