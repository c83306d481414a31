// SPDX-License-Identifier: MIT
// A message's blocks, one delegate per kind: thinking, image, text (Markdown), code.
import QtQuick
import Qt.labs.qmlmodels

Column {
    id: blocks
    property var model: null  // a MessageBlockModel
    property real blockWidth: 600
    property var copier: null
    property bool fitToContent: false  // blocks as narrow as their content (a question's bubble)
    spacing: 8

    Repeater {
        model: blocks.model
        delegate: DelegateChooser {
            role: "kind"
            DelegateChoice {
                roleValue: "thinking"
                ThinkingBlock { blockWidth: blocks.blockWidth }
            }
            DelegateChoice {
                roleValue: "text"
                TextBlock {
                    blockWidth: blocks.blockWidth
                    fitToText: blocks.fitToContent
                    copier: blocks.copier
                }
            }
            DelegateChoice {
                roleValue: "code"
                CodeBlock {
                    blockWidth: blocks.blockWidth
                    copier: blocks.copier
                }
            }
            DelegateChoice {
                roleValue: "image"
                ImageBlock {
                    blockWidth: blocks.blockWidth
                    fitToContent: blocks.fitToContent
                }
            }
        }
    }
}
