// SPDX-License-Identifier: MIT
// A fenced code block: its language, a copy button, the code in a monospace font with syntax highlighting, and
// horizontal scrolling instead of wrapping.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

Rectangle {
    id: block
    required property string text
    required property string language
    property real blockWidth: 600
    property var copier: null
    width: blockWidth
    implicitHeight: column.implicitHeight
    radius: Theme.radius
    color: Theme.codeBackground
    border.color: Theme.border
    clip: true

    ColumnLayout {
        id: column
        width: parent.width
        spacing: 0
        Rectangle {
            Layout.fillWidth: true
            implicitHeight: 30
            color: Theme.codeHeader
            radius: Theme.radius
            Rectangle {  // square lower corners
                anchors.bottom: parent.bottom
                width: parent.width
                height: Theme.radius
                color: parent.color
            }
            RowLayout {
                anchors.fill: parent
                anchors.leftMargin: 12
                anchors.rightMargin: 2
                Label {
                    text: block.language || qsTr("code")
                    color: Theme.mutedText
                    font.family: Theme.monoFamily
                    font.pointSize: 9
                    Layout.fillWidth: true
                }
                CopyButton {
                    objectName: "copyCodeButton"
                    copier: block.copier
                    textToCopy: block.text
                    tip: copied ? qsTr("Copied") : qsTr("Copy code")
                    implicitHeight: 28
                }
            }
        }
        Flickable {
            id: scroller
            Layout.fillWidth: true
            implicitHeight: code.implicitHeight + 20
            contentWidth: Math.max(width, code.implicitWidth + 24)
            contentHeight: height
            flickableDirection: Flickable.HorizontalFlick
            boundsBehavior: Flickable.StopAtBounds
            clip: true
            ScrollBar.horizontal: ScrollBar { policy: ScrollBar.AsNeeded }
            TextEdit {
                id: code
                x: 12
                y: 10
                text: block.text
                textFormat: TextEdit.PlainText
                readOnly: true
                selectByMouse: true
                wrapMode: TextEdit.NoWrap
                color: Theme.text
                selectionColor: Theme.accent
                selectedTextColor: Theme.accentText
                font.family: Theme.monoFamily
                font.pointSize: 9.5
                Accessible.role: Accessible.StaticText
                Accessible.name: qsTr("Code") + (block.language ? " (" + block.language + ")" : "")
            }
        }
    }
    CodeHighlighter {
        id: highlighter
        textDocument: code.textDocument
        language: block.language
        dark: Theme.dark
    }
    property alias highlighted: highlighter.active
}
