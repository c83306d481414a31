// SPDX-License-Identifier: MIT
// Shown while a model loads: which file, how far, and a button that cancels the load.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Rectangle {
    id: overlay
    property real progress: 0
    property string fileName: ""
    signal cancelRequested()
    color: Qt.rgba(Theme.window.r, Theme.window.g, Theme.window.b, 0.86)
    MouseArea {  // the chat below waits
        anchors.fill: parent
        acceptedButtons: Qt.AllButtons
    }
    ColumnLayout {
        anchors.centerIn: parent
        width: Math.min(parent.width - 64, 420)
        spacing: 10
        Label {
            text: qsTr("Loading %1").arg(overlay.fileName)
            font.pointSize: 12
            elide: Text.ElideMiddle
            Layout.fillWidth: true
            horizontalAlignment: Text.AlignHCenter
        }
        ProgressBar {
            objectName: "loadProgress"
            from: 0
            to: 1
            value: overlay.progress
            Layout.fillWidth: true
            Accessible.name: qsTr("Loading progress")
        }
        Label {
            text: Math.round(overlay.progress * 100) + " %"
            color: Theme.mutedText
            Layout.alignment: Qt.AlignHCenter
        }
        Button {
            objectName: "cancelLoadButton"
            text: qsTr("Cancel")
            Layout.alignment: Qt.AlignHCenter
            Accessible.name: qsTr("Cancel loading")
            onClicked: overlay.cancelRequested()
        }
    }
}
