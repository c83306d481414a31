// SPDX-License-Identifier: MIT
#include "stream_buffer.h"

#include <QMutexLocker>

namespace ember::desktop {

namespace {

// The length of `bytes` without a trailing, incomplete UTF-8 sequence.
qsizetype completeUtf8Length(const QByteArray& bytes) {
    const qsizetype n = bytes.size();
    for (qsizetype back = 1; back <= 3 && back <= n; ++back) {
        const auto c = static_cast<unsigned char>(bytes[n - back]);
        if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back for the lead byte
        const qsizetype need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        return need > back ? n - back : n;
    }
    return n;
}

QString takeUtf8(QByteArray& bytes) {
    const qsizetype whole = completeUtf8Length(bytes);
    QString text = QString::fromUtf8(bytes.constData(), whole);
    bytes.remove(0, whole);
    return text;
}

}  // namespace

bool StreamBuffer::append(quint64 turnId, std::string_view content, std::string_view reasoning,
                          qint64 generatedTokens) {
    QMutexLocker lock(&m_mutex);
    if (turnId != m_turnId) {
        m_turnId = turnId;
        m_content.clear();
        m_reasoning.clear();
    }
    m_content.append(content.data(), static_cast<qsizetype>(content.size()));
    m_reasoning.append(reasoning.data(), static_cast<qsizetype>(reasoning.size()));
    m_generatedTokens = generatedTokens;
    const bool wasEmpty = !m_pending;
    m_pending = true;
    return wasEmpty;
}

StreamDelta StreamBuffer::take() {
    QMutexLocker lock(&m_mutex);
    StreamDelta d;
    d.turnId = m_turnId;
    d.content = takeUtf8(m_content);
    d.reasoning = takeUtf8(m_reasoning);
    d.generatedTokens = m_generatedTokens;
    m_pending = false;  // an incomplete character stays for the next append, which notifies again
    return d;
}

}  // namespace ember::desktop
