// SPDX-License-Identifier: MIT
// The open conversation: its title and actions, the messages, and the composer. Connects the components to the
// chat controller and the engine.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

Item {
    id: page
    required property ChatController chat
    required property EngineController engine
    signal attachRequested()
    signal exportRequested(string format)
    signal openModelRequested()
    signal libraryRequested()

    function focusComposer() {
        composer.focusInput()
    }
    readonly property bool canChat: engine.state === EngineController.Ready || engine.state === EngineController.Loading

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        Rectangle {  // header
            Layout.fillWidth: true
            implicitHeight: 48
            color: Theme.window
            Rectangle {
                anchors.bottom: parent.bottom
                width: parent.width
                height: 1
                color: Theme.border
            }
            RowLayout {
                anchors.fill: parent
                anchors.leftMargin: 16
                anchors.rightMargin: 8
                spacing: 6
                Label {
                    objectName: "chatTitle"
                    visible: !titleEditor.visible
                    text: page.chat.title || qsTr("New chat")
                    font.pointSize: 12
                    font.bold: true
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                    MouseArea {
                        anchors.fill: parent
                        enabled: page.chat.conversationId.length > 0
                        onDoubleClicked: {
                            titleEditor.text = page.chat.title
                            titleEditor.visible = true
                            titleEditor.forceActiveFocus()
                        }
                    }
                }
                TextField {
                    id: titleEditor
                    visible: false
                    Layout.fillWidth: true
                    Accessible.name: qsTr("Chat title")
                    onAccepted: {
                        page.chat.renameConversation(page.chat.conversationId, text)
                        visible = false
                    }
                    onActiveFocusChanged: if (!activeFocus) visible = false
                    Keys.onEscapePressed: visible = false
                }
                Button {
                    objectName: "modelButton"
                    flat: true
                    text: page.engine.modelName || qsTr("Choose a model")
                    icon.source: "qrc:/Ember/icons/model.svg"
                    icon.width: 16
                    icon.height: 16
                    icon.color: Theme.text
                    Accessible.name: qsTr("Model: %1").arg(text)
                    onClicked: modelMenu.open()
                    Menu {
                        id: modelMenu
                        y: parent.height
                        MenuItem {
                            text: qsTr("Open a model file…")
                            onTriggered: page.openModelRequested()
                        }
                        MenuItem {
                            text: qsTr("Choose from the library")
                            onTriggered: page.libraryRequested()
                        }
                        MenuItem {
                            text: qsTr("Unload the model")
                            enabled: page.engine.state === EngineController.Ready
                            onTriggered: page.engine.unloadModel()
                        }
                    }
                }
                IconButton {
                    objectName: "exportButton"
                    iconName: "export"
                    tip: qsTr("Export this chat")
                    enabled: page.chat.conversationId.length > 0
                    onClicked: exportMenu.open()
                    Menu {
                        id: exportMenu
                        y: parent.height
                        MenuItem {
                            text: qsTr("As Markdown…")
                            onTriggered: page.exportRequested("markdown")
                        }
                        MenuItem {
                            text: qsTr("As JSON…")
                            onTriggered: page.exportRequested("json")
                        }
                    }
                }
            }
        }

        Item {
            Layout.fillWidth: true
            Layout.fillHeight: true
            MessageList {
                id: messages
                anchors.fill: parent
                model: page.chat.messages
                generating: page.chat.generating
                activity: page.chat.turnActivity
                copier: page.chat
                onRegenerateRequested: page.chat.regenerate()
                onContinueRequested: page.chat.continueLast()
                onEditSubmitted: (row, text) => page.chat.editAndResend(row, text)
                onBranchRequested: (row, delta) => page.chat.switchBranch(row, delta)
            }
            ColumnLayout {  // an empty chat
                anchors.centerIn: parent
                visible: messages.count === 0 && !page.chat.loadingConversation
                spacing: 8
                Image {
                    source: "qrc:/ember/icons/ember.svg"
                    sourceSize: Qt.size(64, 64)
                    Layout.alignment: Qt.AlignHCenter
                    opacity: 0.9
                }
                Label {
                    text: page.engine.state === EngineController.Ready ? qsTr("What shall we talk about?")
                                                                      : qsTr("Load a model to start chatting")
                    font.pointSize: 15
                    Layout.alignment: Qt.AlignHCenter
                }
                Label {
                    text: page.engine.state === EngineController.Ready
                          ? qsTr("Everything runs on this computer with %1.").arg(page.engine.modelName)
                          : qsTr("Open a GGUF file, pick one from the library, or download one from the catalog.")
                    color: Theme.mutedText
                    Layout.alignment: Qt.AlignHCenter
                }
            }
            LoadingOverlay {
                anchors.fill: parent
                visible: page.engine.state === EngineController.Loading
                progress: page.engine.loadProgress
                fileName: page.engine.loadingPath.split("/").pop()
                onCancelRequested: page.engine.cancelLoad()
            }
        }

        ColumnLayout {
            Layout.fillWidth: true
            Layout.maximumWidth: Theme.contentWidth + 32
            Layout.alignment: Qt.AlignHCenter
            Layout.leftMargin: 16
            Layout.rightMargin: 16
            Layout.bottomMargin: 12
            spacing: 8
            NoticeBar {
                objectName: "historyReadOnlyBanner"
                Layout.fillWidth: true
                error: true
                dismissible: false
                text: page.chat.historyReadOnly
                      ? qsTr("History is read-only: new chats will not be saved (%1).").arg(page.chat.historyReadOnly) : ""
            }
            NoticeBar {
                Layout.fillWidth: true
                text: page.chat.notice
                onDismissed: page.chat.clearNotice()
            }
            NoticeBar {  // the GPU failed: the model was unloaded, the CPU can take over
                objectName: "deviceFailureNotice"
                Layout.fillWidth: true
                error: true
                dismissible: false
                text: page.engine.deviceFailure
                actionText: qsTr("Reload on the CPU")
                onActionTriggered: page.engine.reloadOnCpu()
            }
            NoticeBar {  // the model did not fit the GPU whole: say where it runs instead
                id: deviceNotice
                objectName: "deviceNotice"
                property string dismissedText: ""
                Layout.fillWidth: true
                text: page.engine.deviceNotice !== dismissedText ? page.engine.deviceNotice : ""
                onDismissed: dismissedText = page.engine.deviceNotice
            }
            NoticeBar {
                Layout.fillWidth: true
                error: true
                text: page.engine.deviceFailure ? ""
                      : page.engine.state === EngineController.Failed ? page.engine.lastError
                      : (page.engine.templateProblem ? qsTr("This model's chat template cannot be used: %1").arg(page.engine.templateProblem) : "")
            }
            Composer {
                id: composer
                Layout.fillWidth: true
                generating: page.chat.generating
                canSend: page.canChat
                thinkingSupported: page.engine.supportsThinking
                thinkingEnabled: page.chat.thinkingEnabled
                effortSupported: page.engine.supportsReasoningEffort
                reasoningEffort: page.chat.reasoningEffort
                attachments: page.chat.attachments
                visionAvailable: page.engine.canSeeImages
                projectorProblem: page.engine.projectorProblem
                imageInClipboard: () => page.chat.clipboardHasImage()
                onSendRequested: text => page.chat.send(text)
                onStopRequested: page.chat.stop()
                onAttachRequested: page.attachRequested()
                onThinkingToggled: enabled => page.chat.thinkingEnabled = enabled
                onReasoningEffortChosen: effort => page.chat.reasoningEffort = effort
                onRemoveAttachmentRequested: index => page.chat.removeAttachment(index)
                onPasteImageRequested: page.chat.attachClipboardImage()
            }
        }
    }
}
