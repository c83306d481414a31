// SPDX-License-Identifier: MIT
// A one-line message for the user (an error, a hint, a confirmation) with a close button and, when actionText is
// set, a button that does something about it.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Rectangle {
    id: bar
    property string text: ""
    property bool error: false
    property string actionText: ""
    property bool dismissible: true
    signal dismissed()
    signal actionTriggered()
    visible: text.length > 0
    implicitHeight: visible ? row.implicitHeight + 12 : 0
    radius: Theme.radius
    color: error ? Qt.rgba(Theme.danger.r, Theme.danger.g, Theme.danger.b, 0.12) : Theme.hover
    border.color: error ? Theme.danger : Theme.border
    RowLayout {
        id: row
        anchors.fill: parent
        anchors.leftMargin: 12
        anchors.rightMargin: 4
        Label {
            objectName: "noticeText"
            text: bar.text
            wrapMode: Text.Wrap
            color: bar.error ? Theme.danger : Theme.text
            Layout.fillWidth: true
        }
        Button {
            objectName: "noticeActionButton"
            visible: bar.actionText.length > 0
            text: bar.actionText
            onClicked: bar.actionTriggered()
        }
        IconButton {
            objectName: "dismissNoticeButton"
            iconName: "close"
            visible: bar.dismissible
            tip: qsTr("Dismiss")
            onClicked: bar.dismissed()
        }
    }
}
