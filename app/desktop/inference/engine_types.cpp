// SPDX-License-Identifier: MIT
#include "engine_types.h"

namespace ember::desktop {

QVariantMap TurnStats::toVariantMap() const {
    QVariantMap m;
    m.insert(QStringLiteral("promptTokens"), promptTokens);
    m.insert(QStringLiteral("reusedTokens"), reusedTokens);
    m.insert(QStringLiteral("generatedTokens"), generatedTokens);
    m.insert(QStringLiteral("prefillSeconds"), prefillSeconds);
    m.insert(QStringLiteral("decodeSeconds"), decodeSeconds);
    m.insert(QStringLiteral("timeToFirstTokenSeconds"), timeToFirstTokenSeconds);
    m.insert(QStringLiteral("tokensPerSecond"), tokensPerSecond);
    m.insert(QStringLiteral("draftAcceptance"), draftAcceptance);
    if (!speculation.isEmpty()) m.insert(QStringLiteral("speculation"), speculation);
    if (meanAcceptedLength > 0) m.insert(QStringLiteral("meanAcceptedLength"), meanAcceptedLength);
    if (imageTokens > 0) {
        m.insert(QStringLiteral("imageTokens"), imageTokens);
        m.insert(QStringLiteral("imageSeconds"), imageSeconds);
    }
    return m;
}

TurnStats TurnStats::fromVariantMap(const QVariantMap& m) {
    TurnStats s;
    s.promptTokens = m.value(QStringLiteral("promptTokens")).toLongLong();
    s.reusedTokens = m.value(QStringLiteral("reusedTokens")).toLongLong();
    s.generatedTokens = m.value(QStringLiteral("generatedTokens")).toLongLong();
    s.prefillSeconds = m.value(QStringLiteral("prefillSeconds")).toDouble();
    s.decodeSeconds = m.value(QStringLiteral("decodeSeconds")).toDouble();
    s.timeToFirstTokenSeconds = m.value(QStringLiteral("timeToFirstTokenSeconds"), -1.0).toDouble();
    s.tokensPerSecond = m.value(QStringLiteral("tokensPerSecond")).toDouble();
    s.draftAcceptance = m.value(QStringLiteral("draftAcceptance"), -1.0).toDouble();
    s.speculation = m.value(QStringLiteral("speculation")).toString();
    s.meanAcceptedLength = m.value(QStringLiteral("meanAcceptedLength")).toDouble();
    s.imageTokens = m.value(QStringLiteral("imageTokens")).toLongLong();
    s.imageSeconds = m.value(QStringLiteral("imageSeconds")).toDouble();
    return s;
}

}  // namespace ember::desktop
