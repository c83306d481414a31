// SPDX-License-Identifier: MIT
// Memory of the Vulkan backend, its argument-check helpers and the factory.
#include "backend/vulkan/vulkan_backend.h"

#include <cstdlib>
#include <limits>

#include "backend/env_switch.h"
#include "ember/error.h"

namespace ember::vulkan {

uint32_t u32(int64_t v) {
    require(v >= 0 && v <= std::numeric_limits<uint32_t>::max(),
            [v] { return "size " + std::to_string(v) + " out of range"; });
    return static_cast<uint32_t>(v);
}

uint32_t words(size_t bytes) { return u32(static_cast<int64_t>(bytes / 4)); }

VulkanBackend::VulkanBackend(const std::string& device_selector)
    : ctx_(std::make_unique<Context>(device_selector)),
      pipelines_(std::make_unique<Pipelines>(*ctx_)),
      stream_(std::make_unique<Stream>(*ctx_, *pipelines_)) {
    const char* no_dot = std::getenv("EMBER_VULKAN_NO_INTEGER_DOT");
    integer_dot_ = ctx_->integer_dot() && !(no_dot && *no_dot && std::string(no_dot) != "0");
    attention_split_ = ctx_->shuffle_width() >= 8 && env_switched_on("EMBER_VULKAN_ATTENTION_SPLIT");
    attention_tiled_ = ctx_->shuffle_width() >= 8 && env_switched_on("EMBER_VULKAN_ATTENTION_TILED");
    cooperative_matrix_ = ctx_->cooperative_matrix() && env_switched_on("EMBER_VULKAN_COOPERATIVE_MATRIX");
}

VulkanBackend::~VulkanBackend() {
    q8_scratch_.reset();
    stream_.reset();
    pipelines_.reset();
}

std::string VulkanBackend::name() const { return "vulkan (" + ctx_->name() + ")"; }

std::unique_ptr<DeviceBuffer> VulkanBackend::make_buffer(size_t bytes) {
    Stream* stream = stream_.get();
    // Work recorded but not yet run may still use the buffer: run it before the memory goes.
    return std::make_unique<DeviceBuffer>(*ctx_, bytes, ctx_->memory().device_local, [stream] {
        if (stream->pending()) stream->finish();
    });
}

std::unique_ptr<Buffer> VulkanBackend::allocate(size_t bytes) {
    auto buffer = make_buffer(bytes);
    stream_->fill_zero(*buffer);  // as the CPU backend's buffers: state never starts as garbage
    return buffer;
}

std::unique_ptr<Buffer> VulkanBackend::map_weights(std::span<const std::byte> bytes) {
    auto buffer = make_buffer(bytes.size());
    stream_->write(*buffer, 0, bytes);
    return buffer;
}

void VulkanBackend::do_write(const Tensor& dst, std::span<const std::byte> src) {
    auto* buffer = dynamic_cast<DeviceBuffer*>(dst.buffer);
    require(buffer != nullptr, "write: the buffer was not made by this backend");
    std::erase_if(rope_factors_, [&](const auto& entry) { return entry.first.first == dst.buffer; });
    stream_->write(*buffer, dst.offset, src);
}

void VulkanBackend::do_read(const Tensor& src, std::span<std::byte> dst) {
    auto* buffer = dynamic_cast<DeviceBuffer*>(src.buffer);
    require(buffer != nullptr, "read: the buffer was not made by this backend");
    stream_->read(*buffer, src.offset, dst);
}

void VulkanBackend::synchronize() { stream_->finish(); }

}  // namespace ember::vulkan
