// SPDX-License-Identifier: MIT
// Settings: sampling (with presets and per-model presets), answer and context length, threads, the system
// prompt, thinking by default, the color scheme, and the keyboard shortcuts.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

Dialog {
    id: dialog
    required property AppSettings settings
    required property EngineController engine
    objectName: "settingsDialog"
    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(parent ? parent.width - 80 : 640, 640)
    height: Math.min(parent ? parent.height - 80 : 640, 680)
    modal: true
    title: qsTr("Settings")
    footer: DialogButtonBox {
        Button {
            objectName: "aboutButton"
            text: qsTr("About Ember")
            Accessible.name: text
            DialogButtonBox.buttonRole: DialogButtonBox.HelpRole
            onClicked: aboutDialog.open()
        }
        Button {
            objectName: "closeSettingsButton"
            text: qsTr("Close")
            Accessible.name: text
            DialogButtonBox.buttonRole: DialogButtonBox.RejectRole
        }
    }

    component SettingLabel: Label {
        Layout.preferredWidth: 180
        color: Theme.mutedText
    }
    component SliderRow: RowLayout {
        id: row
        property string label
        property real from: 0
        property real to: 1
        property real step: 0.01
        property real value
        property int decimals: 2
        signal moved(real value)
        Layout.fillWidth: true
        SettingLabel { text: row.label }
        Slider {
            id: slider
            Layout.fillWidth: true
            from: row.from
            to: row.to
            stepSize: row.step
            value: row.value
            Accessible.name: row.label
            onMoved: row.moved(value)
        }
        Label {
            text: row.value.toFixed(row.decimals)
            Layout.preferredWidth: 44
            horizontalAlignment: Text.AlignRight
        }
    }

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth
        ColumnLayout {
            width: parent.width
            spacing: 10

            Label { text: qsTr("Generation"); font.bold: true; font.pointSize: 11 }
            RowLayout {
                SettingLabel { text: qsTr("Preset") }
                Repeater {
                    model: dialog.settings.presetNames
                    delegate: Button {
                        required property string modelData
                        text: modelData
                        Accessible.name: qsTr("Apply the %1 preset").arg(modelData)
                        onClicked: dialog.settings.applyPreset(modelData)
                    }
                }
            }
            SliderRow {
                label: qsTr("Temperature")
                to: 2
                value: dialog.settings.temperature
                onMoved: v => dialog.settings.temperature = v
            }
            SliderRow {
                label: qsTr("Top-p")
                value: dialog.settings.topP
                onMoved: v => dialog.settings.topP = v
            }
            SliderRow {
                label: qsTr("Min-p")
                to: 0.5
                value: dialog.settings.minP
                onMoved: v => dialog.settings.minP = v
            }
            SliderRow {
                label: qsTr("Repeat penalty")
                from: 1
                to: 1.5
                value: dialog.settings.repeatPenalty
                onMoved: v => dialog.settings.repeatPenalty = v
            }
            RowLayout {
                SettingLabel { text: qsTr("Top-k") }
                SpinBox {
                    from: 0
                    to: 1000
                    value: dialog.settings.topK
                    editable: true
                    Accessible.name: qsTr("Top-k")
                    onValueModified: dialog.settings.topK = value
                }
            }
            RowLayout {
                SettingLabel { text: qsTr("Seed (0: random)") }
                SpinBox {
                    from: 0
                    to: 2147483647
                    value: dialog.settings.seed
                    editable: true
                    Accessible.name: qsTr("Seed")
                    onValueModified: dialog.settings.seed = value
                }
            }
            RowLayout {
                SettingLabel { text: qsTr("Longest answer") }
                CheckBox {
                    id: unlimited
                    text: qsTr("no limit")
                    checked: dialog.settings.maxTokens < 0
                    Accessible.name: qsTr("No limit on the answer length")
                    onToggled: dialog.settings.maxTokens = checked ? -1 : 1024
                }
                SpinBox {
                    enabled: !unlimited.checked
                    from: 1
                    to: 1000000
                    stepSize: 256
                    editable: true
                    value: Math.max(1, dialog.settings.maxTokens)
                    Accessible.name: qsTr("Longest answer in tokens")
                    onValueModified: dialog.settings.maxTokens = value
                }
            }

            Label { text: qsTr("Model"); font.bold: true; font.pointSize: 11; Layout.topMargin: 8 }
            RowLayout {
                SettingLabel { text: qsTr("Context length") }
                SpinBox {
                    objectName: "contextLengthSpin"
                    from: 256
                    to: 1048576
                    stepSize: 1024
                    editable: true
                    value: dialog.settings.contextLength
                    Accessible.name: qsTr("Context length in tokens")
                    onValueModified: dialog.settings.contextLength = value
                }
            }
            RowLayout {
                SettingLabel { text: qsTr("Backend") }
                ComboBox {
                    objectName: "backendCombo"
                    model: dialog.engine.backendLabels
                    currentIndex: Math.max(0, dialog.engine.backendChoices.indexOf(dialog.settings.backend))
                    implicitWidth: 260
                    Accessible.name: qsTr("Backend")
                    onActivated: index => dialog.settings.backend = dialog.engine.backendChoices[index]
                }
                Label {
                    text: qsTr("applies when a model is loaded")
                    color: Theme.faintText
                    font.pointSize: 8.5
                }
            }
            RowLayout {
                SettingLabel { text: qsTr("CPU threads (0: all)") }
                SpinBox {
                    from: 0
                    to: dialog.settings.maxThreads
                    editable: true
                    value: dialog.settings.threads
                    Accessible.name: qsTr("CPU threads")
                    onValueModified: dialog.settings.threads = value
                }
                Label {
                    text: qsTr("applies when a model is loaded")
                    color: Theme.faintText
                    font.pointSize: 8.5
                }
            }
            RowLayout {
                SettingLabel { text: qsTr("For this model") }
                Button {
                    text: qsTr("Save these settings for %1").arg(dialog.engine.modelName || qsTr("the model"))
                    enabled: dialog.engine.modelPath.length > 0
                    Accessible.name: text
                    onClicked: dialog.settings.saveModelPreset(dialog.engine.modelPath)
                }
                Button {
                    text: qsTr("Forget")
                    enabled: dialog.engine.modelPath.length > 0 && dialog.settings.hasModelPreset(dialog.engine.modelPath)
                    Accessible.name: qsTr("Forget the settings saved for this model")
                    onClicked: dialog.settings.removeModelPreset(dialog.engine.modelPath)
                }
            }

            Label { text: qsTr("Chat"); font.bold: true; font.pointSize: 11; Layout.topMargin: 8 }
            ColumnLayout {
                Layout.fillWidth: true
                SettingLabel { text: qsTr("System prompt") }
                TextArea {
                    Layout.fillWidth: true
                    Layout.preferredHeight: 80
                    wrapMode: TextEdit.Wrap
                    text: dialog.settings.systemPrompt
                    placeholderText: qsTr("Instructions the model reads before every chat")
                    Accessible.name: qsTr("System prompt")
                    onEditingFinished: dialog.settings.systemPrompt = text
                }
            }
            CheckBox {
                text: qsTr("Think before answering in new chats (when the model can)")
                checked: dialog.settings.thinkingByDefault
                Accessible.name: text
                onToggled: dialog.settings.thinkingByDefault = checked
            }

            LocalServerSettings {}

            Label { text: qsTr("Appearance"); font.bold: true; font.pointSize: 11; Layout.topMargin: 8 }
            RowLayout {
                SettingLabel { text: qsTr("Colors") }
                Repeater {
                    model: [{ "key": "system", "label": qsTr("Follow the system") },
                            { "key": "light", "label": qsTr("Light") },
                            { "key": "dark", "label": qsTr("Dark") }]
                    delegate: RadioButton {
                        required property var modelData
                        text: modelData.label
                        checked: dialog.settings.colorScheme === modelData.key
                        Accessible.name: qsTr("Colors: %1").arg(modelData.label)
                        onClicked: dialog.settings.colorScheme = modelData.key
                    }
                }
            }

            Label { text: qsTr("Keyboard"); font.bold: true; font.pointSize: 11; Layout.topMargin: 8 }
            GridLayout {
                columns: 2
                columnSpacing: 24
                Repeater {
                    model: [["Ctrl+N", qsTr("New chat")], ["Ctrl+L", qsTr("Focus the message input")],
                            ["Enter / Shift+Enter", qsTr("Send / new line")], ["Esc", qsTr("Stop the answer")],
                            ["Ctrl+R", qsTr("Regenerate the last answer")],
                            ["Ctrl+Shift+C", qsTr("Copy the last answer")], ["Ctrl+F", qsTr("Search chats")],
                            ["Ctrl+O", qsTr("Open a model file")], ["Ctrl+,", qsTr("Settings")]]
                    delegate: Label {
                        required property var modelData
                        required property int index
                        text: modelData[0] + "    " + modelData[1]
                        color: Theme.mutedText
                    }
                }
            }
            Button {
                text: qsTr("Reset generation settings")
                Accessible.name: text
                Layout.topMargin: 8
                onClicked: dialog.settings.resetToDefaults()
            }
        }
    }

    AboutDialog {
        id: aboutDialog
    }
}
