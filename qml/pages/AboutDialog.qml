// SPDX-License-Identifier: MIT
// About Ember: the version (the build's, from cmake/EmberVersion.cmake through Qt.application.version), what
// Ember is, and its licence.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

Dialog {
    id: dialog
    objectName: "aboutDialog"
    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(parent ? parent.width - 80 : 440, 440)
    modal: true
    title: qsTr("About Ember")
    footer: DialogButtonBox {
        Button {
            objectName: "closeAboutButton"
            text: qsTr("Close")
            Accessible.name: text
            DialogButtonBox.buttonRole: DialogButtonBox.RejectRole
        }
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 10
        Image {
            source: "qrc:/ember/icons/ember.svg"
            sourceSize: Qt.size(72, 72)
            Layout.alignment: Qt.AlignHCenter
        }
        Label {
            text: "Ember"
            font.pointSize: 18
            font.bold: true
            Layout.alignment: Qt.AlignHCenter
        }
        Label {
            objectName: "aboutVersionLabel"
            text: qsTr("Version %1").arg(Qt.application.version)
            color: Theme.mutedText
            Layout.alignment: Qt.AlignHCenter
        }
        Label {
            text: qsTr("Chat with language models that run on this computer, with Ember's own inference engine.")
            wrapMode: Text.Wrap
            horizontalAlignment: Text.AlignHCenter
            Layout.fillWidth: true
        }
        Label {
            text: qsTr("Free software under the MIT licence.")
            wrapMode: Text.Wrap
            horizontalAlignment: Text.AlignHCenter
            color: Theme.faintText
            Layout.fillWidth: true
        }
    }
}
