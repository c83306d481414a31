// SPDX-License-Identifier: MIT
// Numbers as people read them, for QML: durations, sizes, speeds, dates. Stateless.
#pragma once

#include <QObject>
#include <QString>
#include <QtQml/qqmlregistration.h>

namespace ember::desktop {

class Format : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON

public:
    explicit Format(QObject* parent = nullptr) : QObject(parent) {}

    Q_INVOKABLE static QString duration(double seconds);  // "0.21 s", "12.4 s", "3 min 5 s"
    Q_INVOKABLE static QString bytes(double bytes);       // "98.4 MiB"
    Q_INVOKABLE static QString rate(double tokensPerSecond);  // "42.1 tok/s"
    Q_INVOKABLE static QString count(double n);           // "1,234"
    Q_INVOKABLE static QString when(double epochMs);      // "14:05", "yesterday", "3 Mar"
};

}  // namespace ember::desktop
