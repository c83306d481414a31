// SPDX-License-Identifier: MIT
#include "format.h"

#include <QDateTime>
#include <QLocale>
#include <cmath>

namespace ember::desktop {

QString Format::duration(double seconds) {
    if (seconds < 0 || std::isnan(seconds)) return QStringLiteral("–");
    if (seconds < 1) return QString::number(seconds, 'f', 2) + QStringLiteral(" s");
    if (seconds < 60) return QString::number(seconds, 'f', 1) + QStringLiteral(" s");
    const qint64 s = static_cast<qint64>(std::round(seconds));
    return QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60);
}

QString Format::bytes(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        ++u;
    }
    return QString::number(bytes, 'f', u == 0 ? 0 : 1) + QLatin1Char(' ') + QLatin1String(units[u]);
}

QString Format::rate(double tokensPerSecond) {
    return QString::number(tokensPerSecond, 'f', tokensPerSecond < 10 ? 2 : 1) + QStringLiteral(" tok/s");
}

QString Format::count(double n) {
    return QLocale().toString(static_cast<qint64>(n));
}

QString Format::when(double epochMs) {
    const QDateTime t = QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(epochMs));
    const QDate today = QDate::currentDate();
    if (t.date() == today) return t.toString(QStringLiteral("HH:mm"));
    if (t.date() == today.addDays(-1)) return QStringLiteral("yesterday");
    if (t.date().year() == today.year()) return t.toString(QStringLiteral("d MMM"));
    return t.toString(QStringLiteral("d MMM yyyy"));
}

}  // namespace ember::desktop
