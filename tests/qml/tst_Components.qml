// SPDX-License-Identifier: MIT
// Small components: a sidebar conversation (open on click, rename from its menu with Enter, delete only after the
// confirmation), the loading overlay (percent, cancel) and the notice bar (hidden when empty, dismissable).
import QtQuick
import QtQuick.Controls
import QtTest
import Ember

Item {
    id: root
    width: 700
    height: 500

    ConversationDelegate {
        id: conversation
        index: 0
        conversationId: "c1"
        title: "Sorting lists"
        updatedMs: Date.now()
        current: true
        width: 240
    }
    LoadingOverlay {
        id: overlay
        y: 60
        width: 500
        height: 240
        progress: 0.42
        fileName: "model.gguf"
    }
    NoticeBar {
        id: notice
        y: 320
        width: 500
    }
    SignalSpy { id: opened; target: conversation; signalName: "openRequested" }
    SignalSpy { id: renamed; target: conversation; signalName: "renameRequested" }
    SignalSpy { id: deleted; target: conversation; signalName: "deleteRequested" }
    SignalSpy { id: cancelled; target: overlay; signalName: "cancelRequested" }
    SignalSpy { id: dismissed; target: notice; signalName: "dismissed" }

    TestCase {
        name: "Components"
        when: windowShown

        function openMenuItem(name) {
            mouseClick(findChild(conversation, "conversationMenuButton"))
            const entry = findChild(conversation, name)
            verify(entry, name)
            tryVerify(() => entry.visible && entry.width > 0)
            waitForRendering(root)
            mouseClick(entry)
        }

        function test_openOnClick() {
            mouseClick(conversation, 40, 20)
            compare(opened.count, 1)
            compare(opened.signalArguments[0][0], "c1")
        }
        function test_renameFromTheMenu() {
            openMenuItem("renameMenuItem")
            const editor = findChild(conversation, "titleEditor")
            tryVerify(() => editor.visible && editor.activeFocus)
            compare(editor.text, "Sorting lists")
            editor.selectAll()
            keyClick(Qt.Key_S)
            keyClick(Qt.Key_O)
            keyClick(Qt.Key_Return)
            compare(renamed.count, 1)
            compare(renamed.signalArguments[0][0], "c1")
            compare(renamed.signalArguments[0][1], "so")
            verify(!editor.visible)
        }
        function test_deleteAsksFirst() {
            openMenuItem("deleteMenuItem")
            const confirm = findChild(conversation, "deleteConfirm")
            tryVerify(() => confirm.opened)
            compare(deleted.count, 0, "nothing is deleted before the confirmation")
            confirm.reject()
            tryVerify(() => !confirm.visible)
            compare(deleted.count, 0)
            openMenuItem("deleteMenuItem")
            tryVerify(() => confirm.opened)
            confirm.accept()
            compare(deleted.count, 1)
            compare(deleted.signalArguments[0][0], "c1")
        }
        function test_loadingOverlay() {
            verify(findChild(overlay, "loadProgress").value > 0.41)
            mouseClick(findChild(overlay, "cancelLoadButton"))
            compare(cancelled.count, 1)
        }
        function test_noticeBar() {
            verify(!notice.visible)
            compare(notice.implicitHeight, 0)
            notice.text = "Exported to /tmp/chat.md"
            verify(notice.visible)
            verify(notice.implicitHeight > 0)
            waitForRendering(notice)
            mouseClick(findChild(notice, "dismissNoticeButton"))
            compare(dismissed.count, 1)
        }
    }
}
