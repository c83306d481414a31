// SPDX-License-Identifier: MIT
// The model's reasoning: a header with the time it took (a live clock while it thinks), folded once the answer
// starts; click the header (or press Space on it) to unfold.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.impl  // IconImage: a monochrome icon in the theme colour
import QtQuick.Layouts
import Ember

Rectangle {
    id: block
    required property string text
    required property bool closed
    required property bool expanded
    required property real thinkingMs
    required property real thinkingStartedMs
    required property var model
    property real blockWidth: 600
    property real liveMs: 0
    signal toggled(bool expanded)

    width: blockWidth
    implicitHeight: column.implicitHeight + 12
    radius: Theme.radius
    color: Theme.thinkingBackground
    border.color: Theme.border

    readonly property real shownMs: closed ? thinkingMs : liveMs
    readonly property string headerText: closed
        ? qsTr("Thought for %1").arg(Format.duration(shownMs / 1000))
        : qsTr("Thinking… %1").arg(Format.duration(shownMs / 1000))

    Timer {
        interval: 100
        repeat: true
        running: !block.closed
        triggeredOnStart: true
        onTriggered: block.liveMs = Math.max(0, Date.now() - block.thinkingStartedMs)
    }

    function toggle() {
        const next = !block.expanded
        block.model.expanded = next
        block.toggled(next)
    }

    ColumnLayout {
        id: column
        x: 10
        y: 6
        width: parent.width - 20
        spacing: 4
        AbstractButton {
            id: header
            objectName: "thinkingHeader"
            Layout.fillWidth: true
            implicitHeight: 26
            hoverEnabled: true
            Accessible.role: Accessible.Button
            Accessible.name: block.headerText + (block.expanded ? qsTr(", expanded") : qsTr(", collapsed"))
            onClicked: block.toggle()
            Keys.onSpacePressed: block.toggle()
            contentItem: RowLayout {
                spacing: 6
                IconImage {
                    color: Theme.text
                    source: "qrc:/Ember/icons/" + (block.expanded ? "chevron-down" : "chevron-right") + ".svg"
                    sourceSize: Qt.size(14, 14)
                    opacity: 0.6
                }
                IconImage {
                    color: Theme.text
                    source: "qrc:/Ember/icons/think.svg"
                    sourceSize: Qt.size(14, 14)
                    opacity: block.closed ? 0.6 : 1.0
                }
                Label {
                    text: block.headerText
                    color: Theme.mutedText
                    font.italic: !block.closed
                    Layout.fillWidth: true
                }
            }
        }
        TextEdit {
            objectName: "thinkingText"
            visible: block.expanded
            Layout.fillWidth: true
            text: block.text
            textFormat: TextEdit.PlainText
            readOnly: true
            selectByMouse: true
            wrapMode: TextEdit.Wrap
            color: Theme.mutedText
            font.pointSize: 9.5
            bottomPadding: 4
            Accessible.role: Accessible.StaticText
            Accessible.name: qsTr("Reasoning")
        }
    }
}
