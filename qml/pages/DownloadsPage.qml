// SPDX-License-Identifier: MIT
// Downloads: each job's file, progress, speed and time left, with pause, resume and cancel; finished and failed
// jobs stay until cleared.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

Item {
    id: page
    objectName: "downloadsPage"
    required property ModelManager models

    function eta(seconds) {
        if (seconds < 0)
            return "–"
        if (seconds >= 3600)
            return Math.floor(seconds / 3600) + " h " + Math.floor((seconds % 3600) / 60) + " min"
        if (seconds >= 60)
            return Math.floor(seconds / 60) + " min " + Math.floor(seconds % 60) + " s"
        return Math.floor(seconds) + " s"
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 0
        PageHeader {
            Layout.fillWidth: true
            title: qsTr("Downloads")
            subtitle: qsTr("Saved to %1; paused downloads resume where they stopped").arg(page.models.folder)
        }
        ListView {
            id: list
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 10
            topMargin: 14
            model: page.models.downloads
            Accessible.name: qsTr("Downloads")
            Accessible.role: Accessible.List
            Label {
                anchors.centerIn: parent
                visible: list.count === 0
                text: qsTr("Nothing is downloading. Pick a model in the catalog.")
                color: Theme.faintText
            }
            delegate: Rectangle {
                id: row
                required property string catalogId
                required property string name
                required property string downloadState
                required property string error
                required property string currentFile
                required property real received
                required property real total
                required property real fraction
                required property real bytesPerSecond
                required property real etaSeconds
                required property int fileIndex
                required property int fileCount
                width: Math.min(list.width - 40, 860)
                x: (list.width - width) / 2
                implicitHeight: rowColumn.implicitHeight + 24
                radius: 10
                color: Theme.base
                border.color: row.downloadState === "failed" ? Theme.danger : Theme.border
                ColumnLayout {
                    id: rowColumn
                    x: 16
                    y: 12
                    width: parent.width - 32
                    spacing: 6
                    RowLayout {
                        Layout.fillWidth: true
                        Label {
                            text: row.name
                            font.bold: true
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                        Chip {
                            text: row.downloadState
                            tint: row.downloadState === "done" ? Theme.success
                                  : row.downloadState === "failed" ? Theme.danger
                                  : row.downloadState === "paused" ? Theme.warning : Theme.accent
                        }
                    }
                    ProgressBar {
                        Layout.fillWidth: true
                        from: 0
                        to: 1
                        value: row.fraction
                        indeterminate: row.downloadState === "running" && row.total <= 0
                        Accessible.name: qsTr("Progress of %1").arg(row.name)
                    }
                    Label {
                        Layout.fillWidth: true
                        color: Theme.mutedText
                        font.pointSize: 9
                        elide: Text.ElideMiddle
                        text: row.total > 0
                              ? qsTr("%1 of %2  ·  %3/s  ·  %4 left  ·  file %5 of %6: %7")
                                .arg(Format.bytes(row.received)).arg(Format.bytes(row.total))
                                .arg(Format.bytes(row.bytesPerSecond)).arg(page.eta(row.etaSeconds))
                                .arg(row.fileIndex).arg(row.fileCount).arg(row.currentFile)
                              : qsTr("Reading the file list…")
                    }
                    Label {
                        visible: row.error.length > 0
                        text: row.error
                        color: Theme.danger
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                    RowLayout {
                        Layout.alignment: Qt.AlignRight
                        Button {
                            visible: row.downloadState === "running"
                            text: qsTr("Pause")
                            Accessible.name: qsTr("Pause %1").arg(row.name)
                            onClicked: page.models.pauseDownload(row.catalogId)
                        }
                        Button {
                            visible: row.downloadState === "paused"
                            text: qsTr("Resume")
                            Accessible.name: qsTr("Resume %1").arg(row.name)
                            onClicked: page.models.resumeDownload(row.catalogId)
                        }
                        Button {
                            visible: row.downloadState === "running" || row.downloadState === "paused"
                            text: qsTr("Cancel")
                            Accessible.name: qsTr("Cancel %1").arg(row.name)
                            onClicked: page.models.cancelDownload(row.catalogId)
                        }
                        Button {
                            visible: row.downloadState === "failed" || row.downloadState === "cancelled"
                            text: qsTr("Retry")
                            Accessible.name: qsTr("Retry %1").arg(row.name)
                            onClicked: {
                                page.models.clearDownload(row.catalogId)
                                page.models.download(row.catalogId)
                            }
                        }
                        Button {
                            visible: row.downloadState === "done" || row.downloadState === "failed" || row.downloadState === "cancelled"
                            text: qsTr("Clear")
                            Accessible.name: qsTr("Clear %1 from the list").arg(row.name)
                            onClicked: page.models.clearDownload(row.catalogId)
                        }
                    }
                }
            }
        }
    }
}
