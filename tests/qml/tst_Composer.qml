// SPDX-License-Identifier: MIT
// The composer: Enter sends and clears, Shift+Enter adds a line, nothing empty is sent, send becomes stop while
// generating, the thinking switch (a reasoning-effort choice for models that take one), removable thumbnails and
// the plain notice about images.
import QtQuick
import QtTest
import Ember

Item {
    id: root
    width: 700
    height: 300

    ListModel {
        id: attachments
    }
    Composer {
        id: composer
        width: 600
        thinkingSupported: true
        thinkingEnabled: true
        attachments: attachments
    }
    SignalSpy { id: sent; target: composer; signalName: "sendRequested" }
    SignalSpy { id: stopped; target: composer; signalName: "stopRequested" }
    SignalSpy { id: thinking; target: composer; signalName: "thinkingToggled" }
    SignalSpy { id: effort; target: composer; signalName: "reasoningEffortChosen" }
    SignalSpy { id: removed; target: composer; signalName: "removeAttachmentRequested" }

    TestCase {
        name: "Composer"
        when: windowShown

        function find(name) {
            return findChild(composer, name)
        }
        function init() {
            composer.text = ""
            composer.generating = false
            composer.canSend = true
            attachments.clear()
            sent.clear(); stopped.clear(); thinking.clear(); effort.clear(); removed.clear()
            find("composerInput").forceActiveFocus()
        }

        function test_enterSendsAndClears() {
            keyClick(Qt.Key_H)
            keyClick(Qt.Key_I)
            keyClick(Qt.Key_Return)
            compare(sent.count, 1)
            compare(sent.signalArguments[0][0], "hi")
            compare(composer.text, "")
        }
        function test_shiftEnterAddsALine() {
            keyClick(Qt.Key_A)
            keyClick(Qt.Key_Return, Qt.ShiftModifier)
            keyClick(Qt.Key_B)
            compare(sent.count, 0)
            compare(composer.text, "a\nb")
            keyClick(Qt.Key_Enter)
            compare(sent.count, 1)
            compare(sent.signalArguments[0][0], "a\nb")
        }
        function test_emptyIsNotSent() {
            keyClick(Qt.Key_Space)
            keyClick(Qt.Key_Return)
            compare(sent.count, 0)
            verify(!find("sendButton").enabled)
        }
        function test_sendButtonAndStopButton() {
            composer.text = "question"
            const send = find("sendButton")
            verify(send.visible && send.enabled)
            mouseClick(send)
            compare(sent.count, 1)
            composer.generating = true
            verify(!send.visible)
            const stop = find("stopButton")
            verify(stop.visible)
            mouseClick(stop)
            compare(stopped.count, 1)
            composer.text = "more"
            keyClick(Qt.Key_Return)
            compare(sent.count, 1, "nothing is sent while an answer is being written")
        }
        function test_noModelNoSend() {
            composer.canSend = false
            composer.text = "question"
            verify(!find("sendButton").enabled)
            keyClick(Qt.Key_Return)
            compare(sent.count, 0)
        }
        function test_thinkingToggle() {
            const toggle = find("thinkingToggle")
            verify(toggle.visible)
            verify(toggle.checked)
            mouseClick(toggle)
            compare(thinking.count, 1)
            compare(thinking.signalArguments[0][0], false)
            composer.thinkingSupported = false
            verify(!toggle.visible, "no switch when the template has no thinking")
            composer.thinkingSupported = true
        }
        function test_reasoningEffortChoice() {
            const choice = find("reasoningEffortChoice")
            verify(!choice.visible, "a switch, not a choice, for templates without reasoning_effort")
            composer.effortSupported = true
            verify(choice.visible)
            verify(!find("thinkingToggle").visible, "the choice replaces the switch")
            compare(choice.currentIndex, 1)
            choice.activated(2)
            compare(effort.count, 1)
            compare(effort.signalArguments[0][0], "high")
            composer.reasoningEffort = "low"
            compare(choice.currentIndex, 0)
            composer.effortSupported = false
            composer.reasoningEffort = "medium"
        }
        function test_thumbnailsAndNotice() {
            verify(!find("visionNotice").visible)
            attachments.append({source: "qrc:/Ember/icons/model.svg", name: "one.png"})
            attachments.append({source: "qrc:/Ember/icons/chat.svg", name: "two.png"})
            compare(composer.attachmentCount, 2)
            const notice = find("visionNotice")
            tryVerify(() => notice.visible)
            verify(notice.text.indexOf("cannot see images") >= 0)
            composer.projectorProblem = "mmproj.gguf: wrong width"
            verify(notice.text.indexOf("mmproj.gguf: wrong width") >= 0)
            composer.visionAvailable = true
            verify(!notice.visible, "no notice when the model reads the images")
            composer.visionAvailable = false
            composer.projectorProblem = ""
            verify(find("sendButton").enabled, "images alone can be sent")
            waitForRendering(composer)
            const remove = find("removeAttachmentButton")
            tryVerify(() => remove.width > 0 && remove.visible)
            mouseClick(remove)
            compare(removed.count, 1)
            compare(removed.signalArguments[0][0], 0)
        }
    }
}
