// SPDX-License-Identifier: MIT
// Text streamed by the engine worker, waiting for the GUI thread. The worker appends after every token; the GUI
// takes everything at once. Only the append that finds the buffer empty asks the GUI to come (one queued signal),
// so a busy GUI thread receives one batch per visit instead of a growing queue of per-token events.
#pragma once

#include <QByteArray>
#include <QMutex>
#include <QString>
#include <string_view>

namespace ember::desktop {

struct StreamDelta {
    quint64 turnId = 0;
    QString content;
    QString reasoning;
    qint64 generatedTokens = 0;  // tokens generated so far in the turn
    bool empty() const { return content.isEmpty() && reasoning.isEmpty(); }
};

class StreamBuffer {
public:
    // Returns true when the buffer was empty before: the caller must then tell the reader.
    bool append(quint64 turnId, std::string_view content, std::string_view reasoning, qint64 generatedTokens);
    // Everything appended since the last take (text of an older turn is dropped when a new turn starts).
    StreamDelta take();

private:
    QMutex m_mutex;
    quint64 m_turnId = 0;
    QByteArray m_content;  // UTF-8; a character split across appends is converted once whole
    QByteArray m_reasoning;
    qint64 m_generatedTokens = 0;
    bool m_pending = false;
};

}  // namespace ember::desktop
