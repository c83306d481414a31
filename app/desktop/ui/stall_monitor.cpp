// SPDX-License-Identifier: MIT
#include "stall_monitor.h"

#include <QLoggingCategory>

namespace ember::desktop {

Q_LOGGING_CATEGORY(lcStalls, "ember.desktop.stalls")

StallMonitor::StallMonitor(QObject* parent, int intervalMs) : QObject(parent), m_intervalMs(intervalMs) {
    // EMBER_STALL_LOG_MS=n logs every stall longer than n ms, to find what caused it.
    m_logAboveMs = qEnvironmentVariableIntValue("EMBER_STALL_LOG_MS");
    m_timer.setTimerType(Qt::PreciseTimer);
    m_timer.setInterval(intervalMs);
    connect(&m_timer, &QTimer::timeout, this, &StallMonitor::tick);
    m_clock.start();
    m_lastNs = m_clock.nsecsElapsed();
    m_timer.start();
}

void StallMonitor::setPhase(Phase phase) {
    // A stall that spans the switch counts for the phase that caused it: take the pending sample first.
    tick();
    m_phase = phase;
}

void StallMonitor::reset() {
    m_max = {};
    m_samples = {};
    m_lastNs = m_clock.nsecsElapsed();
}

void StallMonitor::tick() {
    const qint64 now = m_clock.nsecsElapsed();
    const double lateMs = static_cast<double>(now - m_lastNs) * 1e-6 - m_intervalMs;
    m_lastNs = now;
    const auto i = static_cast<size_t>(m_phase);
    if (lateMs > m_max[i]) m_max[i] = lateMs;
    if (m_logAboveMs > 0 && lateMs > m_logAboveMs)
        qCInfo(lcStalls).nospace() << "GUI thread stalled " << qRound(lateMs) << " ms while " << phaseName(m_phase)
                                   << " (at " << m_clock.elapsed() << " ms)";
    ++m_samples[i];
}

QString StallMonitor::phaseName(Phase phase) {
    switch (phase) {
        case Phase::Idle: return QStringLiteral("idle");
        case Phase::Loading: return QStringLiteral("loading");
        case Phase::Generating: return QStringLiteral("generating");
    }
    return {};
}

}  // namespace ember::desktop
