// SPDX-License-Identifier: MIT
// Injected device failures, for testing how callers recover from a GPU lost in the middle of a turn.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace ember {

// EMBER_TEST_DEVICE_FAULT=N: the backend's operations after the first N throw DeviceError.
inline constexpr const char* kDeviceFaultVariable = "EMBER_TEST_DEVICE_FAULT";

// `backend` itself, or wrapped to fail as kDeviceFaultVariable says when it is set.
std::unique_ptr<Backend> with_injected_device_fault(std::unique_ptr<Backend> backend);

}  // namespace ember
