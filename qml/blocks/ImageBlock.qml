// SPDX-License-Identifier: MIT
// An attached image: a thumbnail with its name; a click shows it larger.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Item {
    id: block
    required property string imageSource
    required property string imageName
    property real blockWidth: 600
    property bool fitToContent: false
    width: fitToContent ? Math.min(blockWidth, column.implicitWidth) : blockWidth
    implicitHeight: column.implicitHeight

    ColumnLayout {
        id: column
        spacing: 2
        Rectangle {
            implicitWidth: picture.paintedWidth + 2
            implicitHeight: picture.paintedHeight + 2
            color: "transparent"
            border.color: Theme.border
            radius: 4
            Image {
                id: picture
                x: 1
                y: 1
                source: block.imageSource
                sourceSize: Qt.size(280, 280)
                fillMode: Image.PreserveAspectFit
                asynchronous: true
                Accessible.role: Accessible.Graphic
                Accessible.name: block.imageName
            }
            MouseArea {
                anchors.fill: parent
                cursorShape: Qt.PointingHandCursor
                onClicked: viewer.open()
            }
        }
        Label {
            text: block.imageName
            color: Theme.faintText
            font.pointSize: 8.5
            elide: Text.ElideMiddle
            Layout.maximumWidth: 280
        }
    }
    Popup {
        id: viewer
        parent: Overlay.overlay
        anchors.centerIn: parent
        modal: true
        padding: 6
        Image {
            source: block.imageSource
            sourceSize: Qt.size(512, 512)
            fillMode: Image.PreserveAspectFit
        }
    }
}
