// SPDX-License-Identifier: MIT
// A VkBuffer with its own memory allocation, mapped when the memory is host-visible.
#pragma once

#include <functional>

#include "backend/vulkan/vk_context.h"

namespace ember::vulkan {

class DeviceBuffer final : public Buffer {
public:
    // `before_free` runs first in the destructor (the backend waits there for work that may still use the buffer).
    DeviceBuffer(const Context& ctx, size_t bytes, uint32_t memory_type, std::function<void()> before_free = {});
    ~DeviceBuffer() override;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    size_t size() const override { return size_; }
    std::byte* host() override { return mapped_; }
    VkBuffer handle() const { return buffer_; }
    size_t allocated() const { return allocated_; }  // size rounded up to whole 16-byte units

private:
    const Context& ctx_;
    size_t size_ = 0;
    size_t allocated_ = 0;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    std::byte* mapped_ = nullptr;
    std::function<void()> before_free_;
};

}  // namespace ember::vulkan
