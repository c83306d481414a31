// SPDX-License-Identifier: MIT
// The user's settings: sampling, answer length, context length, system prompt, threads, thinking default, color
// scheme, the last model; built-in presets and per-model presets (the values saved for one model file, applied
// whenever that model is loaded). Kept in <data folder>/settings.ini.
#pragma once

#include <QObject>
#include <QSettings>
#include <QStringList>
#include <QtQml/qqmlregistration.h>

#include "ember/runtime.h"

namespace ember::desktop {

class AppSettings : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("The application owns its settings")
    Q_PROPERTY(double temperature READ temperature WRITE setTemperature NOTIFY changed)
    Q_PROPERTY(int topK READ topK WRITE setTopK NOTIFY changed)
    Q_PROPERTY(double topP READ topP WRITE setTopP NOTIFY changed)
    Q_PROPERTY(double minP READ minP WRITE setMinP NOTIFY changed)
    Q_PROPERTY(double repeatPenalty READ repeatPenalty WRITE setRepeatPenalty NOTIFY changed)
    Q_PROPERTY(int seed READ seed WRITE setSeed NOTIFY changed)
    Q_PROPERTY(int maxTokens READ maxTokens WRITE setMaxTokens NOTIFY changed)
    Q_PROPERTY(int contextLength READ contextLength WRITE setContextLength NOTIFY changed)
    Q_PROPERTY(QString systemPrompt READ systemPrompt WRITE setSystemPrompt NOTIFY changed)
    Q_PROPERTY(int threads READ threads WRITE setThreads NOTIFY changed)
    Q_PROPERTY(bool thinkingByDefault READ thinkingByDefault WRITE setThinkingByDefault NOTIFY changed)
    Q_PROPERTY(QString reasoningEffort READ reasoningEffort WRITE setReasoningEffort NOTIFY changed)
    Q_PROPERTY(QString colorScheme READ colorScheme WRITE setColorScheme NOTIFY colorSchemeChanged)
    Q_PROPERTY(QString lastModelPath READ lastModelPath WRITE setLastModelPath NOTIFY changed)
    Q_PROPERTY(QString backend READ backend WRITE setBackend NOTIFY changed)
    Q_PROPERTY(QStringList presetNames READ presetNames CONSTANT)
    Q_PROPERTY(int maxThreads READ maxThreads CONSTANT)

public:
    // `file`: the INI file; tests give a temporary one.
    explicit AppSettings(const QString& file, QObject* parent = nullptr);

    double temperature() const { return m_temperature; }
    int topK() const { return m_topK; }
    double topP() const { return m_topP; }
    double minP() const { return m_minP; }
    double repeatPenalty() const { return m_repeatPenalty; }
    int seed() const { return m_seed; }
    int maxTokens() const { return m_maxTokens; }  // -1: until the answer ends or the context is full
    int contextLength() const { return m_contextLength; }
    QString systemPrompt() const { return m_systemPrompt; }
    int threads() const { return m_threads; }  // 0: all cores
    bool thinkingByDefault() const { return m_thinkingByDefault; }
    // For templates that read reasoning_effort (gpt-oss) instead of a thinking switch: "low", "medium" or "high".
    QString reasoningEffort() const { return m_reasoningEffort; }
    QString colorScheme() const { return m_colorScheme; }  // "system", "light" or "dark"
    QString lastModelPath() const { return m_lastModelPath; }
    QString backend() const { return m_backend; }  // "auto" (the default) or make_backend's name: "cpu", "vulkan:1", ...
    QStringList presetNames() const;
    int maxThreads() const;

    void setTemperature(double v);
    void setTopK(int v);
    void setTopP(double v);
    void setMinP(double v);
    void setRepeatPenalty(double v);
    void setSeed(int v);
    void setMaxTokens(int v);
    void setContextLength(int v);
    void setSystemPrompt(const QString& v);
    void setThreads(int v);
    void setThinkingByDefault(bool v);
    void setReasoningEffort(const QString& v);  // anything but low, medium or high is ignored
    void setColorScheme(const QString& v);
    void setLastModelPath(const QString& v);
    void setBackend(const QString& v);

    Q_INVOKABLE void applyPreset(const QString& name);
    Q_INVOKABLE void resetToDefaults();
    // Per-model presets, keyed by the model file's name.
    Q_INVOKABLE void saveModelPreset(const QString& modelPath);
    Q_INVOKABLE bool hasModelPreset(const QString& modelPath) const;
    Q_INVOKABLE bool applyModelPreset(const QString& modelPath);
    Q_INVOKABLE void removeModelPreset(const QString& modelPath);

    SamplingParams sampling() const;
    GenerationOptions generationOptions() const;
    void sync() { m_settings.sync(); }

Q_SIGNALS:
    void changed();
    void colorSchemeChanged();

private:
    void load(const QString& group);
    void store(const QString& group);
    // Calls visit(key, member) for each generation setting that load() and store() keep per group.
    template <typename Visit>
    void visitGenerationSettings(Visit&& visit);
    static QString modelKey(const QString& modelPath);

    QSettings m_settings;
    double m_temperature = 0.7;
    int m_topK = 40;
    double m_topP = 0.95;
    double m_minP = 0.05;
    double m_repeatPenalty = 1.0;
    int m_seed = 0;
    int m_maxTokens = -1;
    int m_contextLength = 4096;
    QString m_systemPrompt;
    int m_threads = 0;
    bool m_thinkingByDefault = true;
    QString m_reasoningEffort = QStringLiteral("medium");
    QString m_colorScheme = QStringLiteral("system");
    QString m_lastModelPath;
    QString m_backend = QStringLiteral("auto");
};

}  // namespace ember::desktop
