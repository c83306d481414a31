// SPDX-License-Identifier: MIT
// The window's bottom line: the model, the backend, how much of the context the conversation uses, what the
// engine is doing.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

Rectangle {
    id: bar
    required property EngineController engine
    implicitHeight: 28
    color: Theme.sidebar
    Rectangle {
        width: parent.width
        height: 1
        color: Theme.border
    }
    readonly property real contextFraction: engine.contextLength > 0 ? engine.contextUsed / engine.contextLength : 0
    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 12
        anchors.rightMargin: 12
        spacing: 14
        Label {
            objectName: "statusModel"
            text: bar.engine.modelName ? bar.engine.modelName : qsTr("No model loaded")
            font.pointSize: 9
            color: Theme.mutedText
            elide: Text.ElideRight
            // The model's name and the device's reason give way when the line is short of room (never growing past
            // their text), so that the backend, the context and the state stay whole.
            Layout.fillWidth: true
            Layout.minimumWidth: 60
            Layout.maximumWidth: Math.min(320, implicitWidth)
            Accessible.name: qsTr("Model: ") + text
        }
        Label {
            objectName: "statusBackend"
            visible: bar.engine.backendName.length > 0
            text: bar.engine.backendName
                  + (bar.engine.speculation && bar.engine.speculation !== "none"
                     ? qsTr(" · drafts: %1").arg(bar.engine.speculation.toUpperCase()) : "")
            font.pointSize: 9
            color: Theme.mutedText
            Accessible.name: qsTr("Backend: ") + text
            Accessible.description: bar.engine.deviceReason
            HoverHandler { id: backendHover }
            ToolTip.visible: backendHover.hovered && bar.engine.deviceReason.length > 0
            ToolTip.text: bar.engine.deviceReason
        }
        Label {  // why this device: "no GPU found", "NVIDIA H200 (discrete GPU, 139.7 GiB usable): ..."
            objectName: "statusDeviceReason"
            visible: bar.engine.deviceReason.length > 0
            text: bar.engine.deviceReason
            font.pointSize: 9
            color: Theme.faintText
            elide: Text.ElideRight
            Layout.fillWidth: true
            Layout.minimumWidth: 40
            Layout.maximumWidth: Math.min(300, implicitWidth)
            Accessible.name: qsTr("Device: ") + text
        }
        RowLayout {
            visible: bar.engine.contextLength > 0
            spacing: 6
            Rectangle {  // how full the context is
                implicitWidth: 80
                implicitHeight: 6
                radius: 3
                color: Theme.border
                Accessible.role: Accessible.ProgressBar
                Accessible.name: qsTr("Context use: %1%").arg(Math.round(bar.contextFraction * 100))
                Rectangle {
                    width: Math.max(parent.radius * 2, parent.width * Math.min(1, bar.contextFraction))
                    height: parent.height
                    radius: parent.radius
                    color: bar.contextFraction > 0.9 ? Theme.warning : Theme.accent
                }
            }
            Label {
                objectName: "statusContext"
                text: qsTr("context %1 / %2").arg(Format.count(bar.engine.contextUsed)).arg(Format.count(bar.engine.contextLength))
                font.pointSize: 9
                color: bar.contextFraction > 0.9 ? Theme.warning : Theme.mutedText
            }
        }
        Item { Layout.fillWidth: true }
        Label {
            objectName: "statusState"
            font.pointSize: 9
            color: bar.engine.state === EngineController.Failed ? Theme.danger : Theme.mutedText
            elide: Text.ElideRight
            Layout.maximumWidth: 420
            text: {
                if (bar.engine.state === EngineController.Loading)
                    return qsTr("Loading… %1%").arg(Math.round(bar.engine.loadProgress * 100))
                if (bar.engine.deviceFailure)
                    return qsTr("The GPU failed: the model was unloaded")
                if (bar.engine.state === EngineController.Failed)
                    return qsTr("Load failed: %1").arg(bar.engine.lastError)
                if (bar.engine.generating)
                    return qsTr("Generating…")
                if (bar.engine.state === EngineController.Ready)
                    return qsTr("Ready")
                return ""
            }
        }
    }
}
