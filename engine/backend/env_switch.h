// SPDX-License-Identifier: MIT
// The GPU backends' measuring switches: a path the device can take stays on unless its environment variable is
// "0" (EMBER_VULKAN_COOPERATIVE_MATRIX, EMBER_GPU_TENSOR_CORES, ...), for comparing the paths on one device.
#pragma once

#include <cstdlib>
#include <string_view>

namespace ember {

inline bool env_switched_on(const char* name) {
    const char* v = std::getenv(name);
    return !(v && std::string_view(v) == "0");
}

}  // namespace ember
