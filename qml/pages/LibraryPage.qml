// SPDX-License-Identifier: MIT
// The library: the models on disk (downloaded, imported, found in the folder or the Hugging Face cache), their
// size, quantization, capabilities and verification status, the vision projector paired with each, with load,
// verify, reveal and remove.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Ember

Item {
    id: page
    objectName: "libraryPage"
    required property ModelManager models
    required property EngineController engine
    signal loadRequested(string path)
    signal importRequested()

    FileDialog {
        id: projectorDialog
        property string entryId
        nameFilters: [qsTr("Vision projectors (*.gguf)")]
        onAccepted: page.models.setProjector(entryId, selectedFile)
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 0
        PageHeader {
            Layout.fillWidth: true
            title: qsTr("Library")
            subtitle: page.models.folder
            BusyIndicator {
                running: page.models.busy
                visible: running
                implicitWidth: 28
                implicitHeight: 28
            }
            Button {
                objectName: "importButton"
                text: qsTr("Add a model file…")
                icon.source: "qrc:/Ember/icons/plus.svg"
                Accessible.name: text
                onClicked: page.importRequested()
            }
            IconButton {
                iconName: "regenerate"
                tip: qsTr("Look again")
                onClicked: page.models.refreshLibrary()
            }
        }
        NoticeBar {
            Layout.fillWidth: true
            Layout.margins: 12
            text: page.models.notice
            onDismissed: page.models.clearNotice()
        }
        ListView {
            id: list
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 10
            topMargin: 14
            bottomMargin: 14
            model: page.models.library
            Accessible.name: qsTr("Library")
            Accessible.role: Accessible.List
            ScrollBar.vertical: ScrollBar { policy: ScrollBar.AsNeeded }
            Label {
                anchors.centerIn: parent
                visible: list.count === 0 && !page.models.busy
                width: Math.min(list.width - 80, 480)
                horizontalAlignment: Text.AlignHCenter
                wrapMode: Text.Wrap
                text: qsTr("No models yet. Download one from the catalog, add a .gguf file, or drop one onto this window.")
                color: Theme.faintText
            }
            delegate: Rectangle {
                id: card
                required property int index
                required property string entryId
                required property string name
                required property string path
                required property real sizeBytes
                required property string quant
                required property string architecture
                required property real contextLength
                required property var capabilities
                required property string status
                required property string error
                required property string source
                required property bool hasProjector
                required property string projector
                readonly property bool loaded: page.engine.modelPath === path
                width: Math.min(list.width - 40, 860)
                x: (list.width - width) / 2
                implicitHeight: cardColumn.implicitHeight + 24
                radius: 10
                color: Theme.base
                border.color: card.loaded ? Theme.accent : Theme.border
                ColumnLayout {
                    id: cardColumn
                    x: 16
                    y: 12
                    width: parent.width - 32
                    spacing: 6
                    RowLayout {
                        Layout.fillWidth: true
                        Label {
                            text: card.name
                            font.bold: true
                            font.pointSize: 11
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                        Chip {
                            text: card.status
                            tint: card.status === "ready" ? Theme.success : card.status === "failed" ? Theme.danger : Theme.warning
                        }
                        Label {
                            text: Format.bytes(card.sizeBytes)
                            color: Theme.mutedText
                        }
                    }
                    Label {
                        text: card.path
                        color: Theme.faintText
                        font.family: Theme.monoFamily
                        font.pointSize: 8.5
                        elide: Text.ElideMiddle
                        Layout.fillWidth: true
                    }
                    Flow {
                        Layout.fillWidth: true
                        spacing: 6
                        Chip {
                            visible: card.architecture.length > 0
                            text: card.architecture
                            tint: Theme.mutedText
                        }
                        Chip {
                            visible: card.quant.length > 0
                            text: card.quant
                            tint: Theme.mutedText
                        }
                        Chip {
                            visible: card.contextLength > 0
                            text: qsTr("%1 context").arg(Format.count(card.contextLength))
                            tint: Theme.mutedText
                        }
                        Repeater {
                            model: card.capabilities
                            delegate: Chip {
                                required property string modelData
                                text: modelData
                            }
                        }
                        Chip {
                            text: card.source
                            tint: Theme.mutedText
                        }
                    }
                    RowLayout {
                        objectName: "projectorRow"
                        Layout.fillWidth: true
                        spacing: 6
                        Label {
                            text: qsTr("Vision projector:")
                            color: Theme.mutedText
                        }
                        Label {
                            objectName: "projectorName"
                            text: card.projector.length > 0 ? card.projector.split("/").pop() : qsTr("none (images are not read)")
                            color: card.projector.length > 0 ? Theme.text : Theme.faintText
                            elide: Text.ElideMiddle
                            Layout.fillWidth: true
                        }
                        Button {
                            objectName: "chooseProjectorButton"
                            text: qsTr("Choose…")
                            flat: true
                            Accessible.name: qsTr("Choose the vision projector of %1").arg(card.name)
                            onClicked: {
                                projectorDialog.entryId = card.entryId
                                projectorDialog.title = qsTr("Vision projector for %1").arg(card.name)
                                projectorDialog.open()
                            }
                        }
                        Button {
                            visible: card.projector.length > 0
                            text: qsTr("Remove")
                            flat: true
                            Accessible.name: qsTr("Use %1 without a vision projector").arg(card.name)
                            onClicked: page.models.setProjector(card.entryId, "")
                        }
                    }
                    Label {
                        visible: card.error.length > 0
                        text: card.error
                        color: Theme.danger
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                    RowLayout {
                        Layout.alignment: Qt.AlignRight
                        Button {
                            objectName: "loadModelButton"
                            text: card.loaded ? qsTr("Loaded") : qsTr("Load")
                            enabled: !card.loaded && card.status !== "failed"
                            highlighted: !card.loaded
                            Accessible.name: qsTr("Load %1").arg(card.name)
                            onClicked: page.loadRequested(card.path)
                        }
                        Button {
                            text: qsTr("Verify")
                            Accessible.name: qsTr("Verify the files of %1").arg(card.name)
                            onClicked: page.models.verify(card.entryId)
                        }
                        Button {
                            text: qsTr("Show folder")
                            Accessible.name: qsTr("Show the folder of %1").arg(card.name)
                            onClicked: page.models.reveal(card.entryId)
                        }
                        Button {
                            text: card.source === "hub" ? qsTr("Delete") : qsTr("Forget")
                            Accessible.name: qsTr("Remove %1 from the library").arg(card.name)
                            onClicked: confirm.open()
                        }
                    }
                }
                Dialog {
                    id: confirm
                    parent: Overlay.overlay
                    anchors.centerIn: parent
                    modal: true
                    title: card.source === "hub" ? qsTr("Delete this model?") : qsTr("Forget this model?")
                    standardButtons: Dialog.Cancel | Dialog.Ok
                    Label {
                        width: 360
                        wrapMode: Text.Wrap
                        text: card.source === "hub"
                              ? qsTr("The files Ember downloaded for “%1” will be deleted.").arg(card.name)
                              : qsTr("“%1” leaves the library; the file stays where it is.").arg(card.name)
                    }
                    onAccepted: page.models.remove(card.entryId)
                }
            }
        }
    }
}
