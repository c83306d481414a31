// SPDX-License-Identifier: MIT
// The model catalog: the models Ember suggests, with size, capabilities, license, whether they fit this
// machine's memory, and a download button.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

Item {
    id: page
    objectName: "catalogPage"
    required property ModelManager models
    signal downloadStarted(string catalogId)

    ColumnLayout {
        anchors.fill: parent
        spacing: 0
        PageHeader {
            Layout.fillWidth: true
            title: qsTr("Model catalog")
            subtitle: page.models.offline ? qsTr("Offline: browse only") : qsTr("Models Ember suggests; downloads are checked against the hub's SHA-256")
            TextField {
                objectName: "catalogSearch"
                placeholderText: qsTr("Filter (name, capability…)")
                Layout.preferredWidth: 240
                Accessible.name: qsTr("Filter the catalog")
                onTextChanged: page.models.catalog.filter = text
            }
        }
        ListView {
            id: list
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 10
            topMargin: 14
            bottomMargin: 14
            model: page.models.catalog
            Accessible.name: qsTr("Catalog")
            Accessible.role: Accessible.List
            ScrollBar.vertical: ScrollBar { policy: ScrollBar.AsNeeded }
            delegate: Rectangle {
                id: card
                required property string catalogId
                required property string name
                required property string repo
                required property var capabilities
                required property string license
                required property string note
                required property real sizeBytes
                required property bool starter
                required property bool verified
                required property string fit
                required property string fitDetail
                required property bool inLibrary
                required property bool downloading
                width: Math.min(list.width - 40, 860)
                x: (list.width - width) / 2
                implicitHeight: cardColumn.implicitHeight + 24
                radius: 10
                color: Theme.base
                border.color: Theme.border
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
                            visible: card.starter
                            text: qsTr("starter")
                            tint: Theme.success
                        }
                        Label {
                            text: "≈ " + Format.bytes(card.sizeBytes)
                            color: Theme.mutedText
                        }
                    }
                    Label {
                        text: card.repo
                        color: Theme.faintText
                        font.family: Theme.monoFamily
                        font.pointSize: 8.5
                    }
                    Flow {
                        Layout.fillWidth: true
                        spacing: 6
                        Repeater {
                            model: card.capabilities
                            delegate: Chip {
                                required property string modelData
                                text: modelData
                            }
                        }
                        Chip {
                            text: card.fit === "fits" ? qsTr("fits in memory")
                                  : card.fit === "tight" ? qsTr("tight fit") : card.fit === "won't fit" ? qsTr("won't fit") : qsTr("fit unknown")
                            tint: card.fit === "fits" ? Theme.success : card.fit === "tight" ? Theme.warning : Theme.danger
                            ToolTip.visible: fitHover.hovered
                            ToolTip.text: card.fitDetail
                            HoverHandler { id: fitHover }
                        }
                        Chip {
                            visible: !card.verified
                            text: qsTr("names unverified")
                            tint: Theme.warning
                        }
                    }
                    Label {
                        visible: card.note.length > 0
                        text: card.note
                        wrapMode: Text.Wrap
                        color: Theme.mutedText
                        font.pointSize: 9
                        Layout.fillWidth: true
                        maximumLineCount: 3
                        elide: Text.ElideRight
                    }
                    RowLayout {
                        Layout.fillWidth: true
                        Label {
                            text: qsTr("License: %1").arg(card.license)
                            color: Theme.faintText
                            font.pointSize: 8.5
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                        Button {
                            objectName: "downloadButton"
                            text: card.inLibrary ? qsTr("In the library") : card.downloading ? qsTr("Downloading…") : qsTr("Download")
                            enabled: !card.inLibrary && !card.downloading && !page.models.offline
                            highlighted: !card.inLibrary
                            icon.source: "qrc:/Ember/icons/" + (card.inLibrary ? "check" : "download") + ".svg"
                            Accessible.name: qsTr("Download %1").arg(card.name)
                            onClicked: {
                                page.models.download(card.catalogId)
                                page.downloadStarted(card.catalogId)
                            }
                        }
                    }
                }
            }
        }
    }
}
