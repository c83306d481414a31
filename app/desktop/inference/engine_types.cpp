// SPDX-License-Identifier: MIT
#include "engine_types.h"

namespace ember::desktop {

QString speculationName(Speculation method) {
    const std::string_view word = speculation_name(method);
    return QString::fromUtf8(word.data(), static_cast<qsizetype>(word.size()));
}

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
    m.insert(QStringLiteral("speculation"), speculationName(speculation));
    if (meanAcceptedLength > 0) m.insert(QStringLiteral("meanAcceptedLength"), meanAcceptedLength);
    if (imageTokens > 0) {
        m.insert(QStringLiteral("imageTokens"), imageTokens);
        m.insert(QStringLiteral("imageSeconds"), imageSeconds);
    }
    return m;
}

}  // namespace ember::desktop
