// SPDX-License-Identifier: MIT
// VkBuffers with their own memory, mapped where the memory is host-visible.
#include "backend/vulkan/vk_buffer.h"

#include "ember/error.h"

namespace ember::vulkan {

DeviceBuffer::DeviceBuffer(const Context& ctx, size_t bytes, uint32_t memory_type, std::function<void()> before_free)
    : ctx_(ctx), size_(bytes), allocated_((bytes + 15) / 16 * 16), before_free_(std::move(before_free)) {
    if (allocated_ == 0) allocated_ = 16;
    const Api& vk = ctx.api();
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = allocated_;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(vk.vkCreateBuffer(ctx.device(), &bci, nullptr, &buffer_), "vkCreateBuffer");
    VkMemoryRequirements req;
    vk.vkGetBufferMemoryRequirements(ctx.device(), buffer_, &req);
    if (!(req.memoryTypeBits & (1u << memory_type))) {
        vk.vkDestroyBuffer(ctx.device(), buffer_, nullptr);
        throw Error("vulkan: the chosen memory type cannot hold storage buffers");
    }
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = memory_type;
    const VkResult r = vk.vkAllocateMemory(ctx.device(), &mai, nullptr, &memory_);
    if (r != VK_SUCCESS) {
        vk.vkDestroyBuffer(ctx.device(), buffer_, nullptr);
        throw DeviceError("vulkan: out of device memory allocating " + std::to_string(bytes) + " bytes on " + ctx.name() +
                    " (" + result_name(r) + ")");
    }
    check(vk.vkBindBufferMemory(ctx.device(), buffer_, memory_, 0), "vkBindBufferMemory");
    if (memory_type == ctx.memory().staging || memory_type == ctx.memory().readback || ctx.memory().unified) {
        void* p = nullptr;
        check(vk.vkMapMemory(ctx.device(), memory_, 0, VK_WHOLE_SIZE, 0, &p), "vkMapMemory");
        mapped_ = static_cast<std::byte*>(p);
    }
}

DeviceBuffer::~DeviceBuffer() {
    if (before_free_) before_free_();
    const Api& vk = ctx_.api();
    vk.vkDestroyBuffer(ctx_.device(), buffer_, nullptr);
    vk.vkFreeMemory(ctx_.device(), memory_, nullptr);  // unmaps too
}

}  // namespace ember::vulkan
