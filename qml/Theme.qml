// SPDX-License-Identifier: MIT
// Colors and sizes derived from the application palette, which follows the system (or the light/dark choice in
// Settings): every component takes its colors from here, so a palette change restyles the whole window.
pragma Singleton
import QtQuick

QtObject {
    readonly property SystemPalette palette: SystemPalette { colorGroup: SystemPalette.Active }
    readonly property bool dark: palette.window.hslLightness < 0.5

    readonly property color window: palette.window
    readonly property color base: palette.base
    readonly property color text: palette.windowText
    readonly property color mutedText: Qt.rgba(text.r, text.g, text.b, 0.64)
    readonly property color faintText: Qt.rgba(text.r, text.g, text.b, 0.45)
    readonly property color accent: palette.highlight
    readonly property color accentText: palette.highlightedText
    readonly property color border: dark ? Qt.rgba(1, 1, 1, 0.10) : Qt.rgba(0, 0, 0, 0.11)
    readonly property color sidebar: dark ? Qt.darker(window, 1.16) : Qt.darker(window, 1.025)
    readonly property color hover: dark ? Qt.rgba(1, 1, 1, 0.06) : Qt.rgba(0, 0, 0, 0.05)
    readonly property color selected: Qt.rgba(accent.r, accent.g, accent.b, dark ? 0.28 : 0.16)
    readonly property color userBubble: dark ? "#2d3a4e" : "#e4edfb"
    readonly property color codeBackground: dark ? "#1b1d21" : "#f4f6f9"
    readonly property color codeHeader: dark ? "#24272c" : "#e9edf2"
    readonly property color thinkingBackground: dark ? Qt.rgba(1, 1, 1, 0.04) : Qt.rgba(0, 0, 0, 0.03)
    readonly property color warning: dark ? "#e3b341" : "#9a6700"
    readonly property color danger: dark ? "#ff7b72" : "#c62828"
    readonly property color success: dark ? "#56d364" : "#1a7f37"

    readonly property int radius: 8
    readonly property int spacing: 8
    readonly property int contentWidth: 820
    readonly property string monoFamily: "monospace"
}
