// SPDX-License-Identifier: MIT
// The first run, with no model yet: start with the small starter model, browse the catalog, or open a file.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

Item {
    id: page
    objectName: "welcomePage"
    required property ModelManager models
    signal starterRequested()
    signal catalogRequested()
    signal openFileRequested()

    readonly property string starterId: models.starterId()

    ColumnLayout {
        anchors.centerIn: parent
        width: Math.min(parent.width - 80, 560)
        spacing: 14
        Image {
            source: "qrc:/ember/icons/ember.svg"
            sourceSize: Qt.size(88, 88)
            Layout.alignment: Qt.AlignHCenter
        }
        Label {
            text: qsTr("Welcome to Ember")
            font.pointSize: 20
            font.bold: true
            Layout.alignment: Qt.AlignHCenter
        }
        Label {
            text: qsTr("Ember runs language models on this computer: nothing you write leaves it. Choose a model to begin.")
            wrapMode: Text.Wrap
            horizontalAlignment: Text.AlignHCenter
            color: Theme.mutedText
            Layout.fillWidth: true
        }
        Rectangle {
            Layout.fillWidth: true
            Layout.topMargin: 8
            implicitHeight: starter.implicitHeight + 28
            radius: 12
            color: Theme.base
            border.color: Theme.accent
            ColumnLayout {
                id: starter
                x: 16
                y: 14
                width: parent.width - 32
                spacing: 6
                Label {
                    text: qsTr("Start small")
                    font.bold: true
                    font.pointSize: 12
                }
                Label {
                    text: qsTr("%1: a tiny model (about %2) that downloads in moments and answers quickly on any computer. Good for trying Ember; not for hard questions.")
                          .arg(page.models.catalog.nameOf(page.starterId))
                          .arg(Format.bytes(page.models.catalog.sizeOf(page.starterId)))
                    wrapMode: Text.Wrap
                    color: Theme.mutedText
                    Layout.fillWidth: true
                }
                Button {
                    objectName: "starterButton"
                    text: page.models.offline ? qsTr("Offline: downloads are off") : qsTr("Download the starter model")
                    enabled: !page.models.offline && page.starterId.length > 0
                    highlighted: true
                    icon.source: "qrc:/Ember/icons/download.svg"
                    Accessible.name: text
                    onClicked: page.starterRequested()
                }
            }
        }
        RowLayout {
            Layout.alignment: Qt.AlignHCenter
            spacing: 12
            Button {
                objectName: "browseCatalogButton"
                text: qsTr("Browse the catalog")
                icon.source: "qrc:/Ember/icons/catalog.svg"
                Accessible.name: text
                onClicked: page.catalogRequested()
            }
            Button {
                objectName: "openModelFileButton"
                text: qsTr("Open a model file…")
                icon.source: "qrc:/Ember/icons/folder.svg"
                Accessible.name: text
                onClicked: page.openFileRequested()
            }
        }
        Label {
            text: qsTr("You can also drop a .gguf file onto this window.")
            color: Theme.faintText
            Layout.alignment: Qt.AlignHCenter
        }
    }
}
