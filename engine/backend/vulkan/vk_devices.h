// SPDX-License-Identifier: MIT
// The entry points of the Vulkan backend for make_backend and list_devices (backend_factory.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace ember::vulkan {

std::unique_ptr<Backend> make_vulkan_backend(const std::string& device_selector);
std::vector<DeviceInfo> list_vulkan_devices(std::string* error);

}  // namespace ember::vulkan
