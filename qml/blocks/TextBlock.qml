// SPDX-License-Identifier: MIT
// A Markdown paragraph (or list, quote, table) of a message. Selectable; links open in the browser.
import QtQuick

TextEdit {
    id: block
    required text
    property real blockWidth: 600
    property bool fitToText: false  // as narrow as the text (a question's bubble), at most blockWidth
    width: fitToText ? Math.min(blockWidth, Math.ceil(implicitWidth) + 2) : blockWidth
    textFormat: TextEdit.MarkdownText
    readOnly: true
    selectByMouse: true
    wrapMode: TextEdit.Wrap
    color: Theme.text
    selectionColor: Theme.accent
    selectedTextColor: Theme.accentText
    font.pointSize: 10.5
    onLinkActivated: link => Qt.openUrlExternally(link)
    Accessible.role: Accessible.StaticText
    Accessible.name: text
    HoverHandler {
        enabled: block.hoveredLink.length > 0
        cursorShape: Qt.PointingHandCursor
    }
}
