// SPDX-License-Identifier: MIT
// A Markdown paragraph (or list, quote, table) of a message. Selectable; links open in the browser; a copy button
// for the block's Markdown appears while the pointer is over it.
import QtQuick

Item {
    id: block
    required property string text
    property real blockWidth: 600
    property bool fitToText: false  // as narrow as the text (a question's bubble), at most blockWidth
    property var copier: null
    width: fitToText ? Math.min(blockWidth, Math.ceil(edit.implicitWidth) + 2) : blockWidth
    implicitWidth: edit.implicitWidth
    implicitHeight: edit.implicitHeight
    height: edit.height

    TextEdit {
        id: edit
        objectName: "textBlockText"
        width: parent.width
        text: block.text
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
        Accessible.name: block.text
        HoverHandler {
            enabled: edit.hoveredLink.length > 0
            cursorShape: Qt.PointingHandCursor
        }
    }
    HoverHandler {
        id: hover
    }
    CopyButton {
        objectName: "copyTextButton"
        visible: block.copier !== null && !block.fitToText && (hover.hovered || hovered || copied)
        anchors.top: parent.top
        anchors.right: parent.right
        anchors.topMargin: -4
        implicitHeight: 26
        implicitWidth: 26
        copier: block.copier
        textToCopy: block.text
        tip: copied ? qsTr("Copied") : qsTr("Copy this paragraph")
    }
}
