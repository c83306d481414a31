// SPDX-License-Identifier: MIT
// The statistics under an answer: decode speed, tokens, time to first token, prompt tokens reused from the cache,
// and the share of draft tokens accepted when speculative decoding ran.
import QtQuick
import QtQuick.Controls
import Ember

Label {
    id: line
    property var stats: ({})
    readonly property bool hasStats: stats !== undefined && stats !== null && (stats.generatedTokens || 0) > 0
    objectName: "statsLine"
    visible: hasStats
    color: Theme.faintText
    font.pointSize: 8.5
    elide: Text.ElideRight
    text: {
        if (!hasStats)
            return ""
        let parts = [Format.rate(stats.tokensPerSecond || 0),
                     qsTr("%1 tokens").arg(Format.count(stats.generatedTokens || 0))]
        if ((stats.timeToFirstTokenSeconds || -1) >= 0)
            parts.push(qsTr("first token %1").arg(Format.duration(stats.timeToFirstTokenSeconds)))
        if ((stats.promptTokens || 0) > 0)
            parts.push(qsTr("prompt %1 (%2 cached)").arg(Format.count(stats.promptTokens))
                       .arg(Format.count(stats.reusedTokens || 0)))
        if ((stats.imageTokens || 0) > 0)
            parts.push(qsTr("images %1 tokens, read in %2").arg(Format.count(stats.imageTokens))
                       .arg(Format.duration(stats.imageSeconds || 0)))
        if (stats.draftAcceptance !== undefined && stats.draftAcceptance >= 0) {
            let drafted = qsTr("%1% drafts accepted").arg(Math.round(stats.draftAcceptance * 100))
            if (stats.speculation)
                drafted += " (" + stats.speculation.toUpperCase()
                           + (stats.meanAcceptedLength > 0 ? qsTr(", %1 tokens/step").arg(stats.meanAcceptedLength.toFixed(1)) : "")
                           + ")"
            parts.push(drafted)
        }
        return parts.join("  ·  ")
    }
    Accessible.name: qsTr("Statistics: ") + text
}
