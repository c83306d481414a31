// SPDX-License-Identifier: MIT
// Where questions are written: a multi-line input (Enter sends, Shift+Enter starts a new line), the images
// waiting to be sent (removable thumbnails), an attach button, the thinking switch (or, for models that take a
// reasoning effort, a low / medium / high choice) and the send / stop button.
// It only emits what the user asked for; the page connects it to the chat controller.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

Rectangle {
    id: composer
    property bool generating: false
    property bool canSend: true               // false while no model can answer
    property bool thinkingSupported: false
    property bool thinkingEnabled: false
    property bool effortSupported: false      // the template reads reasoning_effort: a choice replaces the switch
    property string reasoningEffort: "medium" // "low", "medium" or "high"
    property var attachments: null            // a list model with `source` and `name` roles
    readonly property int attachmentCount: attachments ? attachments.count : 0
    property bool visionAvailable: false
    property string projectorProblem: ""      // why the projector paired with the model cannot be used
    property var imageInClipboard: function() { return false }
    property alias text: input.text
    signal sendRequested(string text)
    signal stopRequested()
    signal attachRequested()
    signal thinkingToggled(bool enabled)
    signal reasoningEffortChosen(string effort)
    signal removeAttachmentRequested(int index)
    signal pasteImageRequested()

    function focusInput() {
        input.forceActiveFocus()
    }
    function trySend() {
        if (composer.generating || !composer.canSend)
            return false
        if (input.text.trim().length === 0 && composer.attachmentCount === 0)
            return false
        const message = input.text
        input.text = ""
        composer.sendRequested(message)
        return true
    }

    implicitHeight: column.implicitHeight + 20
    color: Theme.base
    radius: 14
    border.color: input.activeFocus ? Theme.accent : Theme.border
    border.width: input.activeFocus ? 1.5 : 1

    ColumnLayout {
        id: column
        x: 10
        y: 10
        width: parent.width - 20
        spacing: 6

        Flow {
            Layout.fillWidth: true
            visible: composer.attachmentCount > 0
            spacing: 8
            Repeater {
                model: composer.attachments
                delegate: Rectangle {
                    id: thumb
                    required property int index
                    required property string source
                    required property string name
                    width: 72
                    height: 72
                    radius: 8
                    color: Theme.codeBackground
                    border.color: Theme.border
                    clip: true
                    Image {
                        anchors.fill: parent
                        anchors.margins: 2
                        source: thumb.source
                        sourceSize: Qt.size(140, 140)
                        fillMode: Image.PreserveAspectCrop
                        asynchronous: true
                        Accessible.role: Accessible.Graphic
                        Accessible.name: thumb.name
                    }
                    RoundButton {
                        objectName: "removeAttachmentButton"
                        anchors.top: parent.top
                        anchors.right: parent.right
                        anchors.margins: 2
                        width: 22
                        height: 22
                        padding: 3
                        icon.source: "qrc:/Ember/icons/close.svg"
                        icon.width: 12
                        icon.height: 12
                        Accessible.name: qsTr("Remove %1").arg(thumb.name)
                        onClicked: composer.removeAttachmentRequested(thumb.index)
                    }
                }
            }
        }

        Label {
            objectName: "visionNotice"
            Layout.fillWidth: true
            visible: composer.attachmentCount > 0 && !composer.visionAvailable
            wrapMode: Text.Wrap
            color: Theme.warning
            font.pointSize: 9
            text: composer.projectorProblem.length > 0
                  ? qsTr("The vision projector of this model cannot be used (%1). The images are saved with the chat; the model reads only your text.").arg(composer.projectorProblem)
                  : qsTr("This model cannot see images (it has no vision projector). The images are saved with the chat; the model reads only your text.")
        }

        RowLayout {
            Layout.fillWidth: true
            spacing: 4
            IconButton {
                objectName: "attachButton"
                iconName: "attach"
                tip: qsTr("Attach images")
                Layout.alignment: Qt.AlignBottom
                onClicked: composer.attachRequested()
            }
            ScrollView {
                id: scroller
                Layout.fillWidth: true
                Layout.preferredHeight: Math.min(input.implicitHeight, 220)
                Layout.alignment: Qt.AlignVCenter
                TextArea {
                    id: input
                    objectName: "composerInput"
                    placeholderText: composer.canSend
                                     ? qsTr("Message Ember…  (Enter sends, Shift+Enter adds a line)")
                                     : qsTr("Load a model to start chatting")
                    wrapMode: TextEdit.Wrap
                    background: null
                    selectByMouse: true
                    font.pointSize: 10.5
                    Accessible.name: qsTr("Message")
                    Accessible.description: qsTr("Enter sends, Shift+Enter adds a line")
                    Keys.onPressed: event => {
                        if (event.key === Qt.Key_Return || event.key === Qt.Key_Enter) {
                            if (!(event.modifiers & Qt.ShiftModifier)) {
                                event.accepted = true
                                composer.trySend()
                            }
                        } else if (event.matches(StandardKey.Paste) && composer.imageInClipboard()) {
                            event.accepted = true
                            composer.pasteImageRequested()
                        }
                    }
                }
            }
            Button {
                id: thinkToggle
                objectName: "thinkingToggle"
                visible: composer.thinkingSupported && !composer.effortSupported
                checkable: true
                checked: composer.thinkingEnabled
                flat: !checked
                text: qsTr("Think")
                icon.source: "qrc:/Ember/icons/think.svg"
                icon.width: 16
                icon.height: 16
                icon.color: checked ? Theme.accentText : Theme.text
                Layout.alignment: Qt.AlignBottom
                Accessible.name: checked ? qsTr("Thinking on") : qsTr("Thinking off")
                ToolTip.visible: hovered
                ToolTip.delay: 600
                ToolTip.text: qsTr("Let the model reason before it answers (remembered for this chat)")
                onToggled: composer.thinkingToggled(checked)
            }
            ComboBox {
                readonly property var efforts: ["low", "medium", "high"]
                objectName: "reasoningEffortChoice"
                visible: composer.effortSupported
                model: [qsTr("Think: low"), qsTr("Think: medium"), qsTr("Think: high")]
                currentIndex: efforts.indexOf(composer.reasoningEffort)
                Layout.alignment: Qt.AlignBottom
                Accessible.name: qsTr("Reasoning effort")
                ToolTip.visible: hovered
                ToolTip.delay: 600
                ToolTip.text: qsTr("How long the model reasons before it answers")
                onActivated: index => composer.reasoningEffortChosen(efforts[index])
            }
            RoundButton {
                objectName: "sendButton"
                visible: !composer.generating
                enabled: composer.canSend && (input.text.trim().length > 0 || composer.attachmentCount > 0)
                highlighted: true
                icon.source: "qrc:/Ember/icons/send.svg"
                icon.width: 18
                icon.height: 18
                Layout.alignment: Qt.AlignBottom
                Accessible.name: qsTr("Send")
                ToolTip.visible: hovered
                ToolTip.delay: 600
                ToolTip.text: qsTr("Send (Enter)")
                onClicked: composer.trySend()
            }
            RoundButton {
                objectName: "stopButton"
                visible: composer.generating
                icon.source: "qrc:/Ember/icons/stop.svg"
                icon.width: 16
                icon.height: 16
                Layout.alignment: Qt.AlignBottom
                Accessible.name: qsTr("Stop")
                ToolTip.visible: hovered
                ToolTip.delay: 600
                ToolTip.text: qsTr("Stop (Esc)")
                onClicked: composer.stopRequested()
            }
        }
    }
}
