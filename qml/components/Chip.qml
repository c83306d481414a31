// SPDX-License-Identifier: MIT
// A small rounded label: a capability, a status, a quantization.
import QtQuick
import QtQuick.Controls

Rectangle {
    id: chip
    property string text
    property color tint: Theme.accent
    implicitWidth: label.implicitWidth + 14
    implicitHeight: label.implicitHeight + 4
    radius: height / 2
    color: Qt.rgba(tint.r, tint.g, tint.b, 0.15)
    Label {
        id: label
        anchors.centerIn: parent
        text: chip.text
        color: chip.tint
        font.pointSize: 8
    }
}
