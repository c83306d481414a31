// SPDX-License-Identifier: MIT
// One Vulkan instance and logical device: device selection (a discrete or integrated GPU before a CPU
// implementation, or the user's pick by index or name), the features Ember's shaders need, the memory types for
// device-local, staging and unified (host-visible device-local) buffers, and the compute queue.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/vulkan/vk_api.h"
#include "backend/backend.h"

namespace ember::vulkan {

// What one physical device offers, whether or not Ember can use it.
struct PhysicalDeviceSummary {
    VkPhysicalDevice handle = VK_NULL_HANDLE;
    DeviceInfo info;
    int score = 0;  // higher is preferred; 0 when unusable
    bool integer_dot = false;            // shaderIntegerDotProduct (Vulkan 1.3 or VK_KHR_shader_integer_dot_product)
    bool integer_dot_extension = false;  // ... and the device lists the extension (enabled with the feature)
    uint32_t shuffle_width = 0;          // the subgroup size where compute shaders have subgroup shuffles, else 0
    // VK_KHR_cooperative_matrix with a 16x16x16 f16 x f16 + f32 subgroup product, fp16 arithmetic, the Vulkan
    // memory model and subgroups of at most 64: what the cooperative-matrix prefill kernels need.
    bool cooperative_matrix = false;
};

class Instance {
public:
    Instance();  // throws ember::Error without a loader or a Vulkan 1.2 instance
    ~Instance();
    Instance(const Instance&) = delete;
    Instance& operator=(const Instance&) = delete;

    const Api& api() const { return api_; }
    VkInstance handle() const { return instance_; }
    std::vector<PhysicalDeviceSummary> devices() const;
    uint32_t api_version() const { return api_version_; }  // the version the instance was made for (1.2 or 1.3)

private:
    Api api_;
    VkInstance instance_ = VK_NULL_HANDLE;
    uint32_t api_version_ = VK_API_VERSION_1_2;
};

// The process's one Vulkan instance, made on first use (and tried again after a failure) and kept until the
// process ends. Every backend and device listing shares it: destroying the last instance makes the loader unload
// the driver, and NVIDIA's driver cannot be loaded again indefinitely (after about 70 instances in one process,
// vkCreateInstance fails with VK_ERROR_INCOMPATIBLE_DRIVER: "Could not get 'vkCreateInstance' ... for ICD
// libGLX_nvidia.so.0").
std::shared_ptr<const Instance> shared_instance();

struct MemoryTypes {
    uint32_t device_local = UINT32_MAX;  // for weights and activations
    uint32_t staging = UINT32_MAX;       // host-visible, coherent: uploads
    uint32_t readback = UINT32_MAX;      // host-visible, coherent, cached where possible: downloads
    bool unified = false;  // all buffers host-visible device-local: writes and reads are plain copies
};

class Context {
public:
    // selector: "" for the best device, a decimal index into Instance::devices(), or part of a device name.
    explicit Context(const std::string& selector);
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    const Api& api() const { return api_; }
    VkDevice device() const { return device_; }
    VkQueue queue() const { return queue_; }
    uint32_t queue_family() const { return queue_family_; }
    const MemoryTypes& memory() const { return memory_; }
    const VkPhysicalDeviceLimits& limits() const { return properties_.limits; }
    const DeviceInfo& info() const { return info_; }
    std::string name() const { return info_.name; }
    uint32_t timestamp_bits() const { return timestamp_bits_; }  // 0: the queue cannot write timestamps
    // Shaders may use SPIR-V integer dot products (OpSDot on packed int8x4): the feature is enabled.
    bool integer_dot() const { return integer_dot_; }
    // The subgroup size where compute shaders can shuffle within subgroups (the split attention and the delta rule
    // with 8 invocations a column need it), else 0.
    uint32_t shuffle_width() const { return shuffle_width_; }
    // The cooperative-matrix kernels (matmul_coop, experts_coop) can run: see PhysicalDeviceSummary.
    bool cooperative_matrix() const { return cooperative_matrix_; }

private:
    std::shared_ptr<const Instance> instance_;
    Api api_;  // the instance's functions plus this device's
    VkPhysicalDevice physical_ = VK_NULL_HANDLE;
    VkPhysicalDeviceProperties properties_{};
    DeviceInfo info_;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    uint32_t queue_family_ = 0;
    uint32_t timestamp_bits_ = 0;
    bool integer_dot_ = false;
    uint32_t shuffle_width_ = 0;
    bool cooperative_matrix_ = false;
    MemoryTypes memory_;
};

}  // namespace ember::vulkan
