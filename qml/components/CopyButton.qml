// SPDX-License-Identifier: MIT
// Copies `textToCopy` through `copier` (anything with copyText(string), e.g. the chat controller) and says so for
// a moment.
import QtQuick

IconButton {
    id: control
    property var copier: null
    property string textToCopy: ""
    property bool copied: false
    iconName: copied ? "check" : "copy"
    tip: copied ? qsTr("Copied") : qsTr("Copy")
    onClicked: {
        if (copier)
            copier.copyText(control.textToCopy)
        copied = true
        resetTimer.restart()
    }
    Timer {
        id: resetTimer
        interval: 1500
        onTriggered: control.copied = false
    }
}
