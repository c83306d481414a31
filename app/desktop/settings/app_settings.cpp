// SPDX-License-Identifier: MIT
#include "app_settings.h"

#include <QCryptographicHash>
#include <QFileInfo>
#include <QThread>
#include <algorithm>
#include <type_traits>

namespace ember::desktop {

namespace {

const QString kGeneration = QStringLiteral("generation");

struct Preset {
    const char* name;
    double temperature;
    int topK;
    double topP;
    double minP;
    double repeatPenalty;
};
// Precise: near-greedy for facts and code. Balanced: the defaults. Creative: flatter sampling for prose.
constexpr Preset kPresets[] = {
    {"Precise", 0.2, 20, 0.9, 0.1, 1.0},
    {"Balanced", 0.7, 40, 0.95, 0.05, 1.0},
    {"Creative", 1.0, 100, 0.98, 0.02, 1.05},
};

}  // namespace

AppSettings::AppSettings(const QString& file, QObject* parent)
    : QObject(parent), m_settings(file, QSettings::IniFormat) {
    load(kGeneration);
    m_colorScheme = m_settings.value(QStringLiteral("ui/colorScheme"), m_colorScheme).toString();
    m_lastModelPath = m_settings.value(QStringLiteral("models/last"), QString()).toString();
    m_backend = m_settings.value(QStringLiteral("engine/backend"), m_backend).toString();
    m_thinkingByDefault = m_settings.value(QStringLiteral("chat/thinkingByDefault"), true).toBool();
    setReasoningEffort(m_settings.value(QStringLiteral("chat/reasoningEffort"), m_reasoningEffort).toString());
}

template <typename Visit>
void AppSettings::visitGenerationSettings(Visit&& visit) {
    visit(QStringLiteral("temperature"), m_temperature);
    visit(QStringLiteral("topK"), m_topK);
    visit(QStringLiteral("topP"), m_topP);
    visit(QStringLiteral("minP"), m_minP);
    visit(QStringLiteral("repeatPenalty"), m_repeatPenalty);
    visit(QStringLiteral("seed"), m_seed);
    visit(QStringLiteral("maxTokens"), m_maxTokens);
    visit(QStringLiteral("contextLength"), m_contextLength);
    visit(QStringLiteral("systemPrompt"), m_systemPrompt);
    visit(QStringLiteral("threads"), m_threads);
}

void AppSettings::load(const QString& group) {
    m_settings.beginGroup(group);
    visitGenerationSettings([this](const QString& key, auto& member) {
        member = m_settings.value(key, member).template value<std::decay_t<decltype(member)>>();
    });
    m_settings.endGroup();
}

void AppSettings::store(const QString& group) {
    m_settings.beginGroup(group);
    visitGenerationSettings([this](const QString& key, const auto& member) { m_settings.setValue(key, member); });
    m_settings.endGroup();
}

#define EMBER_SETTER(Name, member, Type, clampExpr)     \
    void AppSettings::set##Name(Type v) {               \
        v = clampExpr;                                  \
        if (member == v) return;                        \
        member = v;                                     \
        store(kGeneration);                             \
        Q_EMIT changed();                               \
    }

EMBER_SETTER(Temperature, m_temperature, double, std::clamp(v, 0.0, 2.0))
EMBER_SETTER(TopK, m_topK, int, std::clamp(v, 0, 1000))
EMBER_SETTER(TopP, m_topP, double, std::clamp(v, 0.0, 1.0))
EMBER_SETTER(MinP, m_minP, double, std::clamp(v, 0.0, 1.0))
EMBER_SETTER(RepeatPenalty, m_repeatPenalty, double, std::clamp(v, 0.5, 2.0))
EMBER_SETTER(Seed, m_seed, int, std::max(v, 0))
EMBER_SETTER(MaxTokens, m_maxTokens, int, v < 0 ? -1 : std::max(v, 1))
EMBER_SETTER(ContextLength, m_contextLength, int, std::clamp(v, 256, 1 << 20))
EMBER_SETTER(Threads, m_threads, int, std::clamp(v, 0, 1024))
#undef EMBER_SETTER

void AppSettings::setSystemPrompt(const QString& v) {
    if (m_systemPrompt == v) return;
    m_systemPrompt = v;
    store(kGeneration);
    Q_EMIT changed();
}

void AppSettings::setThinkingByDefault(bool v) {
    if (m_thinkingByDefault == v) return;
    m_thinkingByDefault = v;
    m_settings.setValue(QStringLiteral("chat/thinkingByDefault"), v);
    Q_EMIT changed();
}

void AppSettings::setReasoningEffort(const QString& v) {
    if (m_reasoningEffort == v || !QStringList{"low", "medium", "high"}.contains(v)) return;
    m_reasoningEffort = v;
    m_settings.setValue(QStringLiteral("chat/reasoningEffort"), v);
    Q_EMIT changed();
}

void AppSettings::setBackend(const QString& v) {
    const QString name = v.trimmed().isEmpty() ? QStringLiteral("auto") : v.trimmed();
    if (m_backend == name) return;
    m_backend = name;
    m_settings.setValue(QStringLiteral("engine/backend"), name);
    Q_EMIT changed();
}

void AppSettings::setColorScheme(const QString& v) {
    const QString scheme = (v == QLatin1String("light") || v == QLatin1String("dark")) ? v : QStringLiteral("system");
    if (m_colorScheme == scheme) return;
    m_colorScheme = scheme;
    m_settings.setValue(QStringLiteral("ui/colorScheme"), scheme);
    Q_EMIT colorSchemeChanged();
}

void AppSettings::setLastModelPath(const QString& v) {
    if (m_lastModelPath == v) return;
    m_lastModelPath = v;
    m_settings.setValue(QStringLiteral("models/last"), v);
    Q_EMIT changed();
}

QStringList AppSettings::presetNames() const {
    QStringList names;
    for (const Preset& p : kPresets) names.append(QString::fromLatin1(p.name));
    return names;
}

int AppSettings::maxThreads() const {
    return std::max(1, QThread::idealThreadCount());
}

void AppSettings::applyPreset(const QString& name) {
    for (const Preset& p : kPresets) {
        if (name != QLatin1String(p.name)) continue;
        m_temperature = p.temperature;
        m_topK = p.topK;
        m_topP = p.topP;
        m_minP = p.minP;
        m_repeatPenalty = p.repeatPenalty;
        store(kGeneration);
        Q_EMIT changed();
        return;
    }
}

void AppSettings::resetToDefaults() {
    m_temperature = 0.7;
    m_topK = 40;
    m_topP = 0.95;
    m_minP = 0.05;
    m_repeatPenalty = 1.0;
    m_seed = 0;
    m_maxTokens = -1;
    m_contextLength = 4096;
    m_systemPrompt.clear();
    m_threads = 0;
    store(kGeneration);
    Q_EMIT changed();
}

QString AppSettings::modelKey(const QString& modelPath) {
    // The file name keeps a preset with the model when the folder moves; the hash keeps INI keys plain.
    const QString name = QFileInfo(modelPath).fileName();
    return QStringLiteral("model-") +
           QString::fromLatin1(QCryptographicHash::hash(name.toUtf8(), QCryptographicHash::Sha1).toHex().left(16));
}

void AppSettings::saveModelPreset(const QString& modelPath) {
    if (modelPath.isEmpty()) return;
    store(modelKey(modelPath));
    m_settings.setValue(modelKey(modelPath) + QStringLiteral("/file"), QFileInfo(modelPath).fileName());
    Q_EMIT changed();
}

bool AppSettings::hasModelPreset(const QString& modelPath) const {
    return !modelPath.isEmpty() && m_settings.contains(modelKey(modelPath) + QStringLiteral("/file"));
}

bool AppSettings::applyModelPreset(const QString& modelPath) {
    if (!hasModelPreset(modelPath)) return false;
    load(modelKey(modelPath));
    store(kGeneration);
    Q_EMIT changed();
    return true;
}

void AppSettings::removeModelPreset(const QString& modelPath) {
    m_settings.remove(modelKey(modelPath));
    Q_EMIT changed();
}

SamplingParams AppSettings::sampling() const {
    SamplingParams s;
    s.temperature = static_cast<float>(m_temperature);
    s.top_k = m_topK;
    s.top_p = static_cast<float>(m_topP);
    s.min_p = static_cast<float>(m_minP);
    s.repeat_penalty = static_cast<float>(m_repeatPenalty);
    s.seed = static_cast<uint64_t>(m_seed);
    return s;
}

GenerationOptions AppSettings::generationOptions() const {
    GenerationOptions o;
    o.max_tokens = m_maxTokens;
    o.sampling = sampling();
    o.on_context_full = ContextFullPolicy::stop;  // a full context ends the answer; the status bar says why
    return o;
}

}  // namespace ember::desktop
