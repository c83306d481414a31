// SPDX-License-Identifier: MIT
// The Vulkan devices for list_devices, and the backend names "vulkan", "vulkan:N", "vulkan:NAME".
#include "backend/vulkan/vk_devices.h"

#include "backend/vulkan/vulkan_backend.h"

namespace ember::vulkan {

std::unique_ptr<Backend> make_vulkan_backend(const std::string& device_selector) {
    return std::make_unique<VulkanBackend>(device_selector);
}

std::vector<DeviceInfo> list_vulkan_devices(std::string* error) {
    try {
        const std::shared_ptr<const Instance> instance = shared_instance();
        std::vector<DeviceInfo> out;
        for (const PhysicalDeviceSummary& s : instance->devices()) out.push_back(s.info);
        if (out.empty() && error) *error = "the Vulkan loader found no device";
        return out;
    } catch (const Error& e) {
        if (error) *error = e.what();
        return {};
    }
}

}  // namespace ember::vulkan
