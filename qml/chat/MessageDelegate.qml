// SPDX-License-Identifier: MIT
// One message: who wrote it, its branch position ("‹ 2 / 3 ›"), its blocks, its state (stopped, interrupted,
// failed), the statistics of an answer, and its actions (copy; edit for questions; regenerate and continue for
// the last answer).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

Item {
    id: message
    required property int index
    required property string messageId
    required property string role
    required property string messageState
    required property string error
    required property var stats
    required property var blocks
    required property int siblingIndex
    required property int siblingCount
    required property bool isLast
    required property string content
    required property string modelName

    property bool generating: false
    property string activity: ""   // what the engine does before the answer's first text (e.g. reading an image)
    property var copier: null
    property real contentWidth: Theme.contentWidth
    signal copyRequested(int row)
    signal regenerateRequested()
    signal continueRequested()
    signal editSubmitted(int row, string text)
    signal branchRequested(int row, int delta)

    readonly property bool isUser: role === "user"
    readonly property bool streaming: messageState === "streaming"
    property bool editing: false

    width: ListView.view ? ListView.view.width : 800
    implicitHeight: column.implicitHeight + 24

    ColumnLayout {
        id: column
        y: 12
        width: Math.min(message.width - 48, message.contentWidth)
        x: (message.width - width) / 2
        spacing: 6

        RowLayout {
            Layout.fillWidth: true
            spacing: 6
            Label {
                text: message.isUser ? qsTr("You") : (message.modelName || qsTr("Assistant"))
                font.bold: true
                color: message.isUser ? Theme.text : Theme.accent
                Layout.alignment: message.isUser ? Qt.AlignRight : Qt.AlignLeft
                Layout.fillWidth: true
                horizontalAlignment: message.isUser ? Text.AlignRight : Text.AlignLeft
            }
            Loader {  // "‹ 2 / 3 ›", made only for messages with versions
                active: message.siblingCount > 1
                visible: active
                sourceComponent: Component {
                    RowLayout {
                        spacing: 0
                        IconButton {
                            objectName: "previousBranchButton"
                            iconName: "chevron-left"
                            tip: qsTr("Previous version")
                            enabled: message.siblingIndex > 1 && !message.generating
                            onClicked: message.branchRequested(message.index, -1)
                            implicitHeight: 24
                            implicitWidth: 24
                        }
                        Label {
                            objectName: "branchLabel"
                            text: message.siblingIndex + " / " + message.siblingCount
                            color: Theme.mutedText
                            font.pointSize: 9
                            Accessible.name: qsTr("Version %1 of %2").arg(message.siblingIndex).arg(message.siblingCount)
                        }
                        IconButton {
                            objectName: "nextBranchButton"
                            iconName: "chevron-right"
                            tip: qsTr("Next version")
                            enabled: message.siblingIndex < message.siblingCount && !message.generating
                            onClicked: message.branchRequested(message.index, 1)
                            implicitHeight: 24
                            implicitWidth: 24
                        }
                    }
                }
            }
        }

        Rectangle {
            id: bubble
            visible: !message.editing
            Layout.alignment: message.isUser ? Qt.AlignRight : Qt.AlignLeft
            Layout.preferredWidth: message.isUser ? Math.min(column.width * 0.85, blockList.implicitWidth + 28)
                                                  : column.width
            implicitHeight: blockList.implicitHeight + (message.isUser ? 20 : 0)
            radius: 12
            color: message.isUser ? Theme.userBubble : "transparent"
            MessageBlocks {
                id: blockList
                x: message.isUser ? 14 : 0
                y: message.isUser ? 10 : 0
                model: message.blocks
                copier: message.copier
                fitToContent: message.isUser
                blockWidth: message.isUser ? column.width * 0.85 - 28 : column.width
            }
        }

        Loader {  // edit and resend, made only while editing
            active: message.editing
            visible: active
            Layout.fillWidth: true
            sourceComponent: Component {
                ColumnLayout {
                    TextArea {
                        id: editor
                        objectName: "editMessageInput"
                        Layout.fillWidth: true
                        text: message.content
                        Component.onCompleted: forceActiveFocus()
                        wrapMode: TextEdit.Wrap
                        Accessible.name: qsTr("Edit your message")
                    }
                    RowLayout {
                        Layout.alignment: Qt.AlignRight
                        Button {
                            text: qsTr("Cancel")
                            Accessible.name: text
                            onClicked: message.editing = false
                        }
                        Button {
                            objectName: "resendButton"
                            text: qsTr("Send edited message")
                            highlighted: true
                            Accessible.name: text
                            enabled: editor.text.trim().length > 0 && !message.generating
                            onClicked: {
                                const edited = editor.text
                                message.editing = false
                                message.editSubmitted(message.index, edited)
                            }
                        }
                    }
                }
            }
        }

        Label {
            objectName: "turnActivityLabel"
            visible: message.streaming && message.activity.length > 0
            text: message.activity
            color: Theme.mutedText
            font.italic: true
        }

        Label {
            objectName: "messageStateLabel"
            visible: text.length > 0
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            font.pointSize: 9
            color: message.messageState === "failed" ? Theme.danger : Theme.warning
            text: {
                switch (message.messageState) {
                case "stopped": return qsTr("Stopped.")
                case "interrupted": return qsTr("Interrupted: Ember closed while this answer was being written.")
                case "failed": return qsTr("Failed: %1").arg(message.error)
                default: return message.error
                }
            }
        }

        RowLayout {
            Layout.fillWidth: !message.isUser
            Layout.alignment: message.isUser ? Qt.AlignRight : Qt.AlignLeft
            visible: !message.streaming && !message.editing
            spacing: 2
            layoutDirection: message.isUser ? Qt.RightToLeft : Qt.LeftToRight
            CopyButton {
                objectName: "copyMessageButton"
                copier: message.copier
                textToCopy: message.content
                tip: copied ? qsTr("Copied") : qsTr("Copy message")
                implicitHeight: 28
            }
            IconButton {
                objectName: "editButton"
                visible: message.isUser
                iconName: "edit"
                tip: qsTr("Edit and resend")
                enabled: !message.generating
                implicitHeight: 28
                onClicked: {
                    message.editing = true
                }
            }
            IconButton {
                objectName: "regenerateButton"
                visible: !message.isUser && message.isLast
                iconName: "regenerate"
                tip: qsTr("Regenerate (Ctrl+R)")
                enabled: !message.generating
                implicitHeight: 28
                onClicked: message.regenerateRequested()
            }
            IconButton {
                objectName: "continueButton"
                visible: !message.isUser && message.isLast && message.content.length > 0
                iconName: "continue"
                tip: qsTr("Continue this answer")
                enabled: !message.generating
                implicitHeight: 28
                onClicked: message.continueRequested()
            }
            StatsLine {
                visible: !message.isUser
                stats: message.stats
                Layout.fillWidth: true
                Layout.leftMargin: 6
            }
        }
    }
}
