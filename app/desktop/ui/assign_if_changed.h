// SPDX-License-Identifier: MIT
// The first step of the app's property setters: store the new value only when it differs, and say whether it did,
// so the setter knows whether to emit its change signal (and redo what depends on the value).
#pragma once

#include <utility>

namespace ember::desktop {

template <typename T, typename V>
bool assignIfChanged(T& member, V&& value) {
    if (member == value) return false;
    member = std::forward<V>(value);
    return true;
}

}  // namespace ember::desktop
