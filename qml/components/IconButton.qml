// SPDX-License-Identifier: MIT
// A flat tool button showing one of Ember's icons (qml/icons/<name>.svg), with a tooltip and an accessible name.
import QtQuick
import QtQuick.Controls

ToolButton {
    id: control
    property string iconName
    property string tip: ""
    icon.source: iconName ? "qrc:/Ember/icons/" + iconName + ".svg" : ""
    icon.width: 18
    icon.height: 18
    icon.color: enabled ? Theme.text : Theme.faintText
    display: text ? AbstractButton.TextBesideIcon : AbstractButton.IconOnly
    focusPolicy: Qt.TabFocus
    hoverEnabled: true
    ToolTip.visible: hovered && tip.length > 0
    ToolTip.delay: 600
    ToolTip.text: tip
    Accessible.name: tip || text
}
