// SPDX-License-Identifier: MIT
// Buffers of the HIP/CUDA backend and the views the kernels take of tensors in them.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backend/backend_require.h"
#include "backend/gpu/gpu_backend.h"

namespace ember::gpu_backend {

// Device memory. Pending work is flushed and waited for before the memory is freed.
class DeviceBuffer final : public GpuBuffer {
public:
    DeviceBuffer(std::shared_ptr<GpuContext> ctx, size_t bytes);
    ~DeviceBuffer() override;
    size_t size() const override { return size_; }
    std::byte* host() override { return nullptr; }
    std::byte* device() override { return data_; }

private:
    std::shared_ptr<GpuContext> ctx_;
    std::byte* data_ = nullptr;
    size_t size_ = 0;
};

// Registers whole file mappings (each found in /proc/self/maps) with the runtime once, so that every tensor in a
// mapping has a device address; tensors share pages, which cannot be registered twice.
class HostRegistry {
public:
    ~HostRegistry();
    // The device address of host byte p, or nullptr with `why` set when the runtime refuses the mapping.
    std::byte* device_address(const std::byte* p, std::string& why);

private:
    struct Region {
        uintptr_t end = 0;
        std::byte* device = nullptr;  // nullptr: registration refused
        std::string why;
    };
    std::mutex mutex_;
    std::map<uintptr_t, Region> regions_;  // by start address
};

// Weights read in place from the file mapping.
class InPlaceBuffer final : public GpuBuffer {
public:
    InPlaceBuffer(std::shared_ptr<GpuContext> ctx, std::shared_ptr<HostRegistry> registry,
                  std::span<const std::byte> bytes, std::byte* device)
        : ctx_(std::move(ctx)), registry_(std::move(registry)), bytes_(bytes), device_(device) {}
    ~InPlaceBuffer() override;
    size_t size() const override { return bytes_.size(); }
    std::byte* host() override { return const_cast<std::byte*>(bytes_.data()); }  // never written
    std::byte* device() override { return device_; }
    bool writable() const override { return false; }

private:
    std::shared_ptr<GpuContext> ctx_;
    std::shared_ptr<HostRegistry> registry_;  // keeps the registration alive
    std::span<const std::byte> bytes_;
    std::byte* device_;
};

// --- tensor views ----------------------------------------------------------------------------------------------

template <RequireMessage Message>
void require(bool ok, Message&& what) {
    require_or_throw(ok, gpu::kRuntimeName, [&] { return " backend: " + require_message_text(what); });
}

GpuBuffer& gpu_buffer(const Tensor& t, const char* what);
std::byte* device_data(const Tensor& t, const char* what);
gpu_kernels::Rows f32_rows(const Tensor& t, const char* what);
gpu_kernels::Weights weights_of(const Tensor& t, const char* what);
gpu_kernels::TypedRows typed_rows(const Tensor& t, const char* what);
gpu_kernels::Gated gated_of(Activation act);

}  // namespace ember::gpu_backend
