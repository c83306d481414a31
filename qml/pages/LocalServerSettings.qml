// SPDX-License-Identifier: MIT
// Settings for the local OpenAI-compatible server: the switch, port and optional API key, and once it runs the
// address and a copyable example request. Its requests queue behind the chat on the model loaded in the app.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

ColumnLayout {
    id: section
    Layout.fillWidth: true
    spacing: 8

    Label { text: qsTr("Local server"); font.bold: true; font.pointSize: 11; Layout.topMargin: 8 }
    RowLayout {
        Switch {
            objectName: "localServerSwitch"
            text: LocalServer.running ? qsTr("Serving the loaded model to OpenAI-compatible apps")
                                      : qsTr("Serve the loaded model to OpenAI-compatible apps (OpenCode, …)")
            checked: LocalServer.running
            enabled: !LocalServer.stopping
            Accessible.name: qsTr("Local server")
            onToggled: LocalServer.setEnabled(checked)
        }
    }
    RowLayout {
        Label { text: qsTr("Port"); Layout.preferredWidth: 180; color: Theme.mutedText }
        SpinBox {
            objectName: "localServerPort"
            from: 1
            to: 65535
            editable: true
            value: LocalServer.port
            enabled: !LocalServer.running
            Accessible.name: qsTr("Local server port")
            textFromValue: (value, locale) => String(value)
            valueFromText: (text, locale) => parseInt(text)
            onValueModified: LocalServer.port = value
        }
        Label { text: qsTr("on 127.0.0.1 only"); color: Theme.faintText; font.pointSize: 8.5 }
    }
    RowLayout {
        Label { text: qsTr("API key (optional)"); Layout.preferredWidth: 180; color: Theme.mutedText }
        TextField {
            objectName: "localServerKey"
            Layout.preferredWidth: 260
            text: LocalServer.apiKey
            enabled: !LocalServer.running
            placeholderText: qsTr("none: any local app may connect")
            echoMode: activeFocus ? TextInput.Normal : TextInput.Password
            Accessible.name: qsTr("Local server API key")
            onEditingFinished: LocalServer.apiKey = text
        }
    }
    RowLayout {
        visible: LocalServer.running
        Label { text: qsTr("Address"); Layout.preferredWidth: 180; color: Theme.mutedText }
        Label {
            objectName: "localServerAddress"
            text: LocalServer.address
            font.family: "monospace"
            textFormat: Text.PlainText
        }
        CopyButton {
            copier: LocalServer
            textToCopy: LocalServer.address
            Accessible.name: qsTr("Copy the server address")
        }
    }
    RowLayout {
        visible: LocalServer.running
        Layout.fillWidth: true
        Label { text: qsTr("Try it"); Layout.preferredWidth: 180; color: Theme.mutedText; Layout.alignment: Qt.AlignTop }
        Label {
            objectName: "localServerExample"
            Layout.fillWidth: true
            text: LocalServer.example
            wrapMode: Text.WrapAnywhere
            font.family: "monospace"
            font.pointSize: 8.5
            textFormat: Text.PlainText
        }
        CopyButton {
            copier: LocalServer
            textToCopy: LocalServer.example
            Layout.alignment: Qt.AlignTop
            Accessible.name: qsTr("Copy the example request")
        }
    }
    Label {
        visible: LocalServer.error.length > 0
        text: LocalServer.error
        color: Theme.danger
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }
}
