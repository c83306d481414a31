// SPDX-License-Identifier: MIT
// The conversation's messages. While an answer streams, the view follows its end as long as the reader has not
// scrolled up; scrolling up stops the following until the reader returns to the bottom.
import QtQuick
import QtQuick.Controls
import Ember

ListView {
    id: list
    objectName: "messageList"
    property bool generating: false
    property string activity: ""
    property var copier: null
    property bool follow: true
    signal copyRequested(int row)
    signal regenerateRequested()
    signal continueRequested()
    signal editSubmitted(int row, string text)
    signal branchRequested(int row, int delta)

    clip: true
    spacing: 0
    cacheBuffer: 2000
    boundsBehavior: Flickable.StopAtBounds
    ScrollBar.vertical: ScrollBar { policy: ScrollBar.AsNeeded }
    Accessible.name: qsTr("Messages")
    Accessible.role: Accessible.List

    delegate: MessageDelegate {
        generating: list.generating
        activity: list.activity
        copier: list.copier
        onRegenerateRequested: list.regenerateRequested()
        onContinueRequested: list.continueRequested()
        onEditSubmitted: (row, text) => list.editSubmitted(row, text)
        onBranchRequested: (row, delta) => list.branchRequested(row, delta)
    }

    // Creates one message of each block kind once, off screen and spread over idle frames (asynchronous), then
    // drops it: the first real message then costs the GUI thread no first-use work (types, fonts, glyphs) in the
    // frame where it appears.
    Loader {
        id: warmUp
        visible: false
        asynchronous: true
        sourceComponent: MessageDelegate {
            index: 0
            messageId: ""
            role: "assistant"
            messageState: "complete"
            error: ""
            stats: ({generatedTokens: 1, tokensPerSecond: 1})
            siblingIndex: 1
            siblingCount: 1
            isLast: true
            content: "warm"
            modelName: ""
            blocks: ListModel {
                ListElement { kind: "thinking"; text: "warm"; language: ""; closed: true; expanded: true; thinkingMs: 1; thinkingStartedMs: 0; imageSource: ""; imageName: "" }
                ListElement { kind: "text"; text: "warm **up**"; language: ""; closed: true; expanded: false; thinkingMs: 0; thinkingStartedMs: 0; imageSource: ""; imageName: "" }
                ListElement { kind: "code"; text: "def warm(): pass"; language: "python"; closed: true; expanded: false; thinkingMs: 0; thinkingStartedMs: 0; imageSource: ""; imageName: "" }
            }
        }
        onLoaded: Qt.callLater(() => warmUp.active = false)
    }

    function scrollToEnd() {
        Qt.callLater(() => list.positionViewAtEnd())
    }
    onMovementEnded: follow = atYEnd
    onCountChanged: if (follow) scrollToEnd()
    onContentHeightChanged: if (follow && !moving) scrollToEnd()
    onModelChanged: {
        follow = true
        scrollToEnd()
    }
}
