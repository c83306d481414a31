// SPDX-License-Identifier: MIT
// Ember's window: the sidebar, the page (chat, model catalog, downloads, library, or the welcome page of a first
// run), the status bar; drag-and-drop of images (attached) and .gguf files (imported); the keyboard shortcuts.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Ember

ApplicationWindow {
    id: window
    objectName: "mainWindow"
    required property ChatController chat
    required property EngineController engine
    required property AppSettings settings
    required property ModelManager models

    property string page: "chat"  // chat, catalog, downloads, library
    readonly property bool firstRun: engine.state === EngineController.NoModel && settings.lastModelPath === ""
    readonly property int pageIndex: {
        switch (page) {
        case "catalog": return 1
        case "downloads": return 2
        case "library": return 3
        default: return firstRun ? 4 : 0
        }
    }

    width: 1180
    height: 780
    minimumWidth: 760
    minimumHeight: 480
    visible: true
    title: chat.title ? chat.title + " — Ember" : "Ember"
    color: Theme.window
    // The controls follow the application palette even when it changes while the window is open (the light/dark
    // choice in Settings, or the system switching): each role is bound to the live palette.
    palette.window: Theme.palette.window
    palette.windowText: Theme.palette.windowText
    palette.base: Theme.palette.base
    palette.alternateBase: Theme.palette.alternateBase
    palette.text: Theme.palette.text
    palette.button: Theme.palette.button
    palette.buttonText: Theme.palette.buttonText
    palette.highlight: Theme.palette.highlight
    palette.highlightedText: Theme.palette.highlightedText
    palette.light: Theme.palette.light
    palette.midlight: Theme.palette.midlight
    palette.mid: Theme.palette.mid
    palette.dark: Theme.palette.dark
    palette.shadow: Theme.palette.shadow
    palette.placeholderText: Theme.palette.placeholderText

    function showPage(name) {
        page = name
        if (name === "chat")
            Qt.callLater(() => chatPage.focusComposer())
    }
    function loadModel(path) {
        engine.loadModel(path, settings.threads, settings.contextLength, settings.backend, models.projectorFor(path))
        showPage("chat")
    }

    Shortcut {
        sequences: [StandardKey.New]
        onActivated: {
            window.chat.newConversation()
            window.showPage("chat")
        }
    }
    Shortcut {
        sequence: "Ctrl+L"
        onActivated: window.showPage("chat")
    }
    Shortcut {
        sequence: "Esc"
        enabled: window.chat.generating
        onActivated: window.chat.stop()
    }
    Shortcut {
        sequence: "Ctrl+R"
        enabled: !window.chat.generating
        onActivated: window.chat.regenerate()
    }
    Shortcut {
        sequence: "Ctrl+Shift+C"
        onActivated: window.chat.copyLastAnswer()
    }
    Shortcut {
        sequences: [StandardKey.Find]
        onActivated: sidebar.focusSearch()
    }
    Shortcut {
        sequence: "Ctrl+,"
        onActivated: settingsDialog.open()
    }
    Shortcut {
        sequences: [StandardKey.Open]
        onActivated: openModelDialog.open()
    }

    RowLayout {
        anchors.fill: parent
        spacing: 0
        Sidebar {
            id: sidebar
            Layout.fillHeight: true
            chat: window.chat
            models: window.models
            page: window.page
            onPageRequested: name => window.showPage(name)
            onSettingsRequested: settingsDialog.open()
        }
        Rectangle {
            Layout.fillHeight: true
            width: 1
            color: Theme.border
        }
        ColumnLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: 0
            StackLayout {
                Layout.fillWidth: true
                Layout.fillHeight: true
                currentIndex: window.pageIndex
                ChatPage {
                    id: chatPage
                    chat: window.chat
                    engine: window.engine
                    onAttachRequested: attachDialog.open()
                    onExportRequested: format => {
                        exportDialog.format = format
                        exportDialog.open()
                    }
                    onOpenModelRequested: openModelDialog.open()
                    onLibraryRequested: window.showPage("library")
                }
                CatalogPage {
                    models: window.models
                    onDownloadStarted: window.showPage("downloads")
                }
                DownloadsPage {
                    models: window.models
                }
                LibraryPage {
                    models: window.models
                    engine: window.engine
                    onLoadRequested: path => window.loadModel(path)
                    onImportRequested: importDialog.open()
                }
                WelcomePage {
                    models: window.models
                    onStarterRequested: {
                        window.models.download(window.models.starterId())
                        window.showPage("downloads")
                    }
                    onCatalogRequested: window.showPage("catalog")
                    onOpenFileRequested: openModelDialog.open()
                }
            }
            StatusBar {
                Layout.fillWidth: true
                engine: window.engine
            }
        }
    }

    DropArea {
        id: drop
        anchors.fill: parent
        keys: ["text/uri-list"]
        onDropped: event => {
            window.chat.attachFiles(event.urls)
            event.acceptProposedAction()
        }
        Rectangle {
            anchors.fill: parent
            visible: drop.containsDrag
            color: Qt.rgba(Theme.accent.r, Theme.accent.g, Theme.accent.b, 0.12)
            border.color: Theme.accent
            border.width: 2
            Label {
                anchors.centerIn: parent
                text: qsTr("Drop images to attach them, or .gguf files to add them to the library")
                font.pointSize: 13
            }
        }
    }

    Connections {
        target: window.models
        function onDownloadFinished(catalogId, modelPath, ok) {
            if (ok && window.engine.state !== EngineController.Ready && window.engine.state !== EngineController.Loading)
                window.loadModel(modelPath)
        }
        function onImported(modelPath, ok) {
            if (ok && window.engine.state !== EngineController.Ready && window.engine.state !== EngineController.Loading)
                window.loadModel(modelPath)
        }
    }

    HistoryRecoveredDialog {
        chat: window.chat
    }
    SettingsDialog {
        id: settingsDialog
        settings: window.settings
        engine: window.engine
    }
    FileDialog {
        id: attachDialog
        title: qsTr("Attach images")
        fileMode: FileDialog.OpenFiles
        nameFilters: [qsTr("Images (*.png *.jpg *.jpeg *.webp *.gif *.bmp)"), qsTr("All files (*)")]
        onAccepted: window.chat.attachFiles(selectedFiles)
    }
    FileDialog {
        id: openModelDialog
        title: qsTr("Open a model")
        nameFilters: [qsTr("GGUF models (*.gguf)")]
        onAccepted: window.loadModel(selectedFile)
    }
    FileDialog {
        id: importDialog
        title: qsTr("Add a model to the library")
        nameFilters: [qsTr("GGUF models (*.gguf)")]
        onAccepted: window.models.importModel(selectedFile)
    }
    FileDialog {
        id: exportDialog
        property string format: "markdown"
        title: qsTr("Export chat")
        fileMode: FileDialog.SaveFile
        defaultSuffix: format === "json" ? "json" : "md"
        nameFilters: format === "json" ? [qsTr("JSON (*.json)")] : [qsTr("Markdown (*.md)")]
        onAccepted: window.chat.exportConversation(selectedFile, format)
    }
}
