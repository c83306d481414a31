// SPDX-License-Identifier: MIT
// Measures how long the GUI thread goes without running its event loop: a precise timer fires every few
// milliseconds on the GUI thread, and any lateness beyond the interval is a stall (a frame that could not be
// drawn, input that waited). The longest stall is kept per phase (idle, loading a model, generating), so the
// claim "the GUI never blocks" is a number, not a hope.
#pragma once

#include <QElapsedTimer>
#include <array>
#include <QObject>
#include <QTimer>

namespace ember::desktop {

class StallMonitor : public QObject {
    Q_OBJECT
public:
    enum class Phase { Idle, Loading, Generating };
    explicit StallMonitor(QObject* parent = nullptr, int intervalMs = 5);

    void setPhase(Phase phase);
    Phase phase() const { return m_phase; }
    // The longest stall seen in a phase, in milliseconds (0 when the phase never ran).
    double maxStallMs(Phase phase) const { return m_max[static_cast<size_t>(phase)]; }
    int samples(Phase phase) const { return m_samples[static_cast<size_t>(phase)]; }
    void reset();
    static QString phaseName(Phase phase);

private:
    void tick();

    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_lastNs = 0;
    int m_intervalMs;
    int m_logAboveMs = 0;
    Phase m_phase = Phase::Idle;
    std::array<double, 3> m_max{};
    std::array<int, 3> m_samples{};
};

}  // namespace ember::desktop
