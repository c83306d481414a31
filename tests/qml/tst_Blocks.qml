// SPDX-License-Identifier: MIT
// Message blocks: a code block shows its language, copies exactly its code and is highlighted for a known
// language; the thinking block's header tells the time, unfolds on click and shows the reasoning only unfolded;
// the statistics line; the copy button says it copied.
import QtQuick
import QtTest
import Ember

Item {
    id: root
    width: 800
    height: 600

    QtObject {
        id: copier
        property string copied: ""
        function copyText(text) { copied = text }
    }
    CodeBlock {
        id: code
        text: "def add(a, b):\n    return a + b"
        language: "python"
        copier: copier
    }
    CodeBlock {
        id: unknownCode
        y: 200
        text: "blorp zonk"
        language: "klingon"
    }
    ThinkingBlock {
        id: thinking
        y: 300
        text: "Let me consider the request."
        closed: true
        expanded: false
        thinkingMs: 2500
        thinkingStartedMs: 0
        model: ({expanded: false})
    }
    TextBlock {
        id: paragraph
        x: 0
        y: 420
        blockWidth: 400
        text: "Some **bold** words."
        copier: copier
    }
    StatsLine {
        id: stats
        y: 500
        width: 700
    }
    SignalSpy { id: toggled; target: thinking; signalName: "toggled" }

    TestCase {
        name: "Blocks"
        when: windowShown

        function test_codeBlock() {
            verify(findChild(code, "copyCodeButton"))
            mouseClick(findChild(code, "copyCodeButton"))
            compare(copier.copied, "def add(a, b):\n    return a + b")
            verify(code.highlighted, "python is highlighted")
            verify(!unknownCode.highlighted, "an unknown language is shown plain")
            verify(code.height > 60)
        }
        function test_copyButtonSaysCopied() {
            const button = findChild(code, "copyCodeButton")
            tryVerify(() => !button.copied, 5000)
            mouseClick(button)
            verify(button.copied)
            tryVerify(() => !button.copied, 5000)
        }
        function test_thinkingFoldedAndUnfolded() {
            compare(thinking.headerText, "Thought for 2.5 s")
            const text = findChild(thinking, "thinkingText")
            verify(!text.visible)
            mouseClick(findChild(thinking, "thinkingHeader"))
            compare(toggled.count, 1)
            compare(toggled.signalArguments[0][0], true)
            compare(thinking.model.expanded, true)
            thinking.expanded = true
            verify(text.visible)
            compare(text.text, "Let me consider the request.")
        }
        function test_thinkingLiveClock() {
            thinking.closed = false
            thinking.thinkingStartedMs = Date.now() - 1200
            tryVerify(() => thinking.headerText.indexOf("Thinking…") === 0)
            tryVerify(() => thinking.liveMs >= 1200)
            thinking.closed = true
        }
        function test_textBlockCopyOnHover() {
            const button = findChild(paragraph, "copyTextButton")
            verify(!button.visible, "hidden until the pointer is over the paragraph")
            mouseMove(paragraph, 40, 8)
            tryVerify(() => button.visible)
            mouseClick(button)
            compare(copier.copied, "Some **bold** words.", "the block's Markdown is copied")
            verify(findChild(paragraph, "textBlockText").implicitWidth > 0)
        }
        function test_statsLine() {
            stats.stats = {}
            verify(!stats.visible)
            stats.stats = {generatedTokens: 120, tokensPerSecond: 42.1, timeToFirstTokenSeconds: 0.21,
                           promptTokens: 30, reusedTokens: 12, draftAcceptance: -1}
            verify(stats.visible)
            verify(stats.text.indexOf("42.1 tok/s") >= 0, stats.text)
            verify(stats.text.indexOf("120 tokens") >= 0, stats.text)
            verify(stats.text.indexOf("first token") >= 0, stats.text)
            verify(stats.text.indexOf("drafts") < 0, "no speculation, no acceptance")
            stats.stats = {generatedTokens: 120, tokensPerSecond: 42.1, draftAcceptance: 0.734, speculation: "mtp"}
            verify(stats.text.indexOf("73% drafts accepted (MTP)") >= 0, stats.text)
            stats.stats = {generatedTokens: 120, tokensPerSecond: 42.1, draftAcceptance: 0.5, speculation: "dflash",
                           meanAcceptedLength: 2.5}
            verify(stats.text.indexOf("50% drafts accepted (DFLASH, 2.5 tokens/step)") >= 0, stats.text)
        }
    }
}
