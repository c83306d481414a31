// SPDX-License-Identifier: MIT
// The title line of a page, with room for actions on the right.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Rectangle {
    id: header
    property string title
    property string subtitle
    default property alias actions: actionRow.data
    implicitHeight: 64
    color: Theme.window
    Rectangle {
        anchors.bottom: parent.bottom
        width: parent.width
        height: 1
        color: Theme.border
    }
    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 20
        anchors.rightMargin: 16
        ColumnLayout {
            spacing: 2
            Layout.fillWidth: true
            Label {
                text: header.title
                font.pointSize: 14
                font.bold: true
            }
            Label {
                visible: text.length > 0
                text: header.subtitle
                color: Theme.mutedText
                elide: Text.ElideMiddle
                Layout.fillWidth: true
            }
        }
        RowLayout {
            id: actionRow
        }
    }
}
