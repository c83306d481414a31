// SPDX-License-Identifier: MIT
// Said once at startup when the chat history was damaged: where the damaged file was moved and what was recovered.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

Dialog {
    id: dialog
    required property ChatController chat
    objectName: "historyRecoveredDialog"
    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(parent ? parent.width - 80 : 560, 560)
    modal: true
    visible: chat.recoveredHistoryPath.length > 0
    title: qsTr("Chat history was damaged")
    onClosed: chat.dismissRecoveredHistory()
    footer: DialogButtonBox {
        Button {
            objectName: "closeHistoryRecoveredButton"
            text: qsTr("OK")
            Accessible.name: text
            DialogButtonBox.buttonRole: DialogButtonBox.AcceptRole
        }
    }
    ColumnLayout {
        anchors.fill: parent
        spacing: 10
        Label {
            text: qsTr("The history file could not be read completely. Ember moved it aside and started a new one with what could be read: %1.").arg(dialog.chat.recoveredHistorySummary)
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
        Label {
            text: qsTr("The damaged file is kept at:")
            color: Theme.mutedText
        }
        TextField {
            objectName: "recoveredHistoryPath"
            Accessible.name: qsTr("Where the damaged history file is kept")
            text: dialog.chat.recoveredHistoryPath
            readOnly: true
            selectByMouse: true
            Layout.fillWidth: true
        }
    }
}
