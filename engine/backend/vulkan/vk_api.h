// SPDX-License-Identifier: MIT
// The Vulkan entry points Ember uses, loaded at run time from the system's loader (libvulkan.so.1), so that a
// binary built with Vulkan still starts, and runs on the CPU, on a machine without it.
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

#include <string>

#include "backend/vulkan/vk_khr_coopmat.h"

namespace ember::vulkan {

#define EMBER_VK_GLOBAL_FUNCTIONS(X) \
    X(vkCreateInstance)              \
    X(vkEnumerateInstanceVersion)

#define EMBER_VK_INSTANCE_FUNCTIONS(X)           \
    X(vkDestroyInstance)                         \
    X(vkEnumeratePhysicalDevices)                \
    X(vkGetPhysicalDeviceProperties)             \
    X(vkGetPhysicalDeviceProperties2)            \
    X(vkGetPhysicalDeviceFeatures2)              \
    X(vkGetPhysicalDeviceMemoryProperties)       \
    X(vkGetPhysicalDeviceQueueFamilyProperties)  \
    X(vkEnumerateDeviceExtensionProperties)      \
    X(vkCreateDevice)                            \
    X(vkGetDeviceProcAddr)

// Extension functions that may be absent (the loader and the drivers predate them): null then.
#define EMBER_VK_OPTIONAL_INSTANCE_FUNCTIONS(X) X(vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)

#define EMBER_VK_DEVICE_FUNCTIONS(X) \
    X(vkDestroyDevice)               \
    X(vkGetDeviceQueue)              \
    X(vkCreateBuffer)                \
    X(vkDestroyBuffer)               \
    X(vkGetBufferMemoryRequirements) \
    X(vkAllocateMemory)              \
    X(vkFreeMemory)                  \
    X(vkBindBufferMemory)            \
    X(vkMapMemory)                   \
    X(vkCreateShaderModule)          \
    X(vkDestroyShaderModule)         \
    X(vkCreateDescriptorSetLayout)   \
    X(vkDestroyDescriptorSetLayout)  \
    X(vkCreatePipelineLayout)        \
    X(vkDestroyPipelineLayout)       \
    X(vkCreateComputePipelines)      \
    X(vkDestroyPipeline)             \
    X(vkCreateCommandPool)           \
    X(vkDestroyCommandPool)          \
    X(vkAllocateCommandBuffers)      \
    X(vkBeginCommandBuffer)          \
    X(vkEndCommandBuffer)            \
    X(vkResetCommandBuffer)          \
    X(vkCmdBindPipeline)             \
    X(vkCmdPushConstants)            \
    X(vkCmdDispatch)                 \
    X(vkCmdPipelineBarrier)          \
    X(vkCmdCopyBuffer)               \
    X(vkCmdFillBuffer)               \
    X(vkCmdPushDescriptorSetKHR)     \
    X(vkQueueSubmit)                 \
    X(vkCreateFence)                 \
    X(vkDestroyFence)                \
    X(vkWaitForFences)               \
    X(vkResetFences)                 \
    X(vkDeviceWaitIdle)              \
    X(vkCreateQueryPool)             \
    X(vkDestroyQueryPool)            \
    X(vkCmdResetQueryPool)           \
    X(vkCmdWriteTimestamp)           \
    X(vkGetQueryPoolResults)

struct Api {
#define EMBER_VK_DECLARE(name) PFN_##name name = nullptr;
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
    EMBER_VK_GLOBAL_FUNCTIONS(EMBER_VK_DECLARE)
    EMBER_VK_INSTANCE_FUNCTIONS(EMBER_VK_DECLARE)
    EMBER_VK_OPTIONAL_INSTANCE_FUNCTIONS(EMBER_VK_DECLARE)
    EMBER_VK_DEVICE_FUNCTIONS(EMBER_VK_DECLARE)
#undef EMBER_VK_DECLARE
};

// The loader library's entry point; the library is opened once and stays loaded for the life of the process.
// Throws ember::Error when no Vulkan loader is installed (and tries again on the next call).
PFN_vkGetInstanceProcAddr loader_entry_point();

void load_global_functions(Api& api, PFN_vkGetInstanceProcAddr gipa);
void load_instance_functions(Api& api, VkInstance instance);
void load_device_functions(Api& api, VkDevice device);

// Throws ember::Error "vulkan: <what> failed (VK_ERROR_...)" unless result is VK_SUCCESS.
void check(VkResult result, const char* what);
std::string result_name(VkResult result);

}  // namespace ember::vulkan
