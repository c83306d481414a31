// SPDX-License-Identifier: MIT
#include "storage_events.h"

#include <QMetaMethod>

namespace ember::desktop {

void StorageEvents::forwardFrom(StorageEvents* source) {
    const QMetaObject& events = StorageEvents::staticMetaObject;
    for (int i = events.methodOffset(); i < events.methodCount(); ++i) {
        const QMetaMethod signal = events.method(i);
        if (signal.methodType() == QMetaMethod::Signal) connect(source, signal, this, signal);
    }
}

}  // namespace ember::desktop
