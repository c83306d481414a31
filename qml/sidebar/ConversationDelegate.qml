// SPDX-License-Identifier: MIT
// A conversation in the sidebar: its title and last activity; a menu to rename, export or delete it.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

ItemDelegate {
    id: item
    required property int index
    required property string conversationId
    required property string title
    required property real updatedMs
    property bool current: false
    signal openRequested(string id)
    signal renameRequested(string id, string title)
    signal deleteRequested(string id)

    width: ListView.view ? ListView.view.width : 240
    height: 44
    highlighted: current
    Accessible.name: title
    onClicked: openRequested(conversationId)
    background: Rectangle {
        radius: 6
        color: item.current ? Theme.selected : (item.hovered ? Theme.hover : "transparent")
    }
    contentItem: RowLayout {
        spacing: 4
        ColumnLayout {
            spacing: 0
            Layout.fillWidth: true
            Label {
                visible: !editor.visible
                text: item.title
                elide: Text.ElideRight
                Layout.fillWidth: true
            }
            TextField {
                id: editor
                objectName: "titleEditor"
                visible: false
                Layout.fillWidth: true
                Accessible.name: qsTr("New title")
                onAccepted: {
                    item.renameRequested(item.conversationId, text)
                    visible = false
                }
                Keys.onEscapePressed: visible = false
                onActiveFocusChanged: if (!activeFocus) visible = false
            }
            Label {
                text: Format.when(item.updatedMs)
                color: Theme.faintText
                font.pointSize: 8
            }
        }
        IconButton {
            objectName: "conversationMenuButton"
            iconName: "more"
            tip: qsTr("More actions for %1").arg(item.title)
            visible: item.hovered || item.current || menu.visible
            implicitWidth: 28
            implicitHeight: 28
            onClicked: menu.open()
            Menu {
                id: menu
                y: parent.height
                MenuItem {
                    objectName: "renameMenuItem"
                    text: qsTr("Rename")
                    onTriggered: {
                        editor.text = item.title
                        editor.visible = true
                        editor.forceActiveFocus()
                    }
                }
                MenuItem {
                    objectName: "deleteMenuItem"
                    text: qsTr("Delete")
                    onTriggered: confirm.open()
                }
            }
        }
    }
    Dialog {
        id: confirm
        objectName: "deleteConfirm"
        parent: Overlay.overlay
        anchors.centerIn: parent
        modal: true
        title: qsTr("Delete this chat?")
        standardButtons: Dialog.Cancel | Dialog.Ok
        Label {
            text: qsTr("“%1” and all its messages will be deleted.").arg(item.title)
            wrapMode: Text.Wrap
        }
        onAccepted: item.deleteRequested(item.conversationId)
    }
}
