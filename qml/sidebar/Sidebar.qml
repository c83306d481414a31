// SPDX-License-Identifier: MIT
// The left column: a new chat, search over titles and messages, the conversations, and the ways to the model
// pages and the settings.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.impl  // IconImage: a monochrome icon in the theme colour
import QtQuick.Layouts
import Ember

Rectangle {
    id: sidebar
    required property ChatController chat
    required property ModelManager models
    property string page: "chat"
    signal pageRequested(string name)
    signal settingsRequested()
    function focusSearch() {
        search.forceActiveFocus()
    }

    implicitWidth: 264
    color: Theme.sidebar

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 10
        spacing: 8

        RowLayout {
            Layout.fillWidth: true
            Image {
                source: "qrc:/ember/icons/ember.svg"
                sourceSize: Qt.size(26, 26)
            }
            Label {
                text: "Ember"
                font.pointSize: 13
                font.bold: true
                Layout.fillWidth: true
            }
            IconButton {
                objectName: "newChatButton"
                iconName: "plus"
                tip: qsTr("New chat (Ctrl+N)")
                onClicked: {
                    sidebar.chat.newConversation()
                    sidebar.pageRequested("chat")
                }
            }
        }

        TextField {
            id: search
            objectName: "searchField"
            Layout.fillWidth: true
            placeholderText: qsTr("Search chats")
            Accessible.name: qsTr("Search chats by title and content")
            leftPadding: 30
            onTextChanged: searchDelay.restart()
            IconImage {
                color: Theme.mutedText
                x: 8
                anchors.verticalCenter: parent.verticalCenter
                source: "qrc:/Ember/icons/search.svg"
                sourceSize: Qt.size(14, 14)
                opacity: 0.55
            }
            Timer {
                id: searchDelay
                interval: 150
                onTriggered: sidebar.chat.searchText = search.text
            }
        }

        ListView {
            id: list
            objectName: "conversationList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 2
            model: sidebar.chat.conversations
            Accessible.name: qsTr("Chats")
            Accessible.role: Accessible.List
            ScrollBar.vertical: ScrollBar { policy: ScrollBar.AsNeeded }
            delegate: ConversationDelegate {
                current: conversationId === sidebar.chat.conversationId && sidebar.page === "chat"
                onOpenRequested: id => {
                    sidebar.chat.openConversation(id)
                    sidebar.pageRequested("chat")
                }
                onRenameRequested: (id, title) => sidebar.chat.renameConversation(id, title)
                onDeleteRequested: id => sidebar.chat.deleteConversation(id)
            }
            Label {
                anchors.centerIn: parent
                visible: list.count === 0
                text: sidebar.chat.searchText ? qsTr("No chat matches") : qsTr("No chats yet")
                color: Theme.faintText
            }
        }

        Rectangle {
            Layout.fillWidth: true
            height: 1
            color: Theme.border
        }

        component NavButton: ItemDelegate {
            id: nav
            property string iconName
            property string pageName
            property int badge: 0
            Layout.fillWidth: true
            height: 36
            highlighted: sidebar.page === pageName
            Accessible.name: text
            icon.source: "qrc:/Ember/icons/" + iconName + ".svg"
            icon.width: 16
            icon.height: 16
            icon.color: Theme.text
            palette.highlightedText: Theme.text  // the selected page's label stays readable on the pale highlight
            background: Rectangle {
                radius: 6
                color: nav.highlighted ? Theme.selected : (nav.hovered ? Theme.hover : "transparent")
            }
            onClicked: if (pageName) sidebar.pageRequested(pageName)
            Rectangle {
                visible: nav.badge > 0
                anchors.right: parent.right
                anchors.rightMargin: 10
                anchors.verticalCenter: parent.verticalCenter
                width: 20
                height: 18
                radius: 9
                color: Theme.accent
                Label {
                    anchors.centerIn: parent
                    text: nav.badge
                    color: Theme.accentText
                    font.pointSize: 8
                }
            }
        }
        NavButton {
            objectName: "catalogNav"
            text: qsTr("Model catalog")
            iconName: "catalog"
            pageName: "catalog"
        }
        NavButton {
            objectName: "downloadsNav"
            text: qsTr("Downloads")
            iconName: "download"
            pageName: "downloads"
            badge: sidebar.models.downloads.activeCount
        }
        NavButton {
            objectName: "libraryNav"
            text: qsTr("Library")
            iconName: "library"
            pageName: "library"
        }
        NavButton {
            objectName: "settingsNav"
            text: qsTr("Settings")
            iconName: "settings"
            onClicked: sidebar.settingsRequested()
        }
    }
}
