// SPDX-License-Identifier: MIT
// Loading libvulkan once and resolving the entry points Ember uses.
#include "backend/vulkan/vk_api.h"

#include <dlfcn.h>

#include "ember/error.h"

namespace ember::vulkan {

namespace {

PFN_vkGetInstanceProcAddr open_loader() {
    void* library = nullptr;
    for (const char* name : {"libvulkan.so.1", "libvulkan.so"}) {
        library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (library) break;
    }
    if (!library) throw Error("vulkan: no Vulkan loader (libvulkan.so.1) is installed");
    auto entry = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(library, "vkGetInstanceProcAddr"));
    if (!entry) {
        dlclose(library);
        throw Error("vulkan: the loader has no vkGetInstanceProcAddr");
    }
    return entry;  // the library stays open: see loader_entry_point
}

}  // namespace

PFN_vkGetInstanceProcAddr loader_entry_point() {
    static const PFN_vkGetInstanceProcAddr entry = open_loader();
    return entry;
}

void load_global_functions(Api& api, PFN_vkGetInstanceProcAddr gipa) {
    api.vkGetInstanceProcAddr = gipa;
#define EMBER_VK_LOAD(name) api.name = reinterpret_cast<PFN_##name>(gipa(nullptr, #name));
    EMBER_VK_GLOBAL_FUNCTIONS(EMBER_VK_LOAD)
#undef EMBER_VK_LOAD
    if (!api.vkCreateInstance) throw Error("vulkan: the loader has no vkCreateInstance");
}

void load_instance_functions(Api& api, VkInstance instance) {
#define EMBER_VK_LOAD(name)                                                                      \
    api.name = reinterpret_cast<PFN_##name>(api.vkGetInstanceProcAddr(instance, #name));         \
    if (!api.name) throw Error("vulkan: the loader has no " #name);
    EMBER_VK_INSTANCE_FUNCTIONS(EMBER_VK_LOAD)
#undef EMBER_VK_LOAD
#define EMBER_VK_LOAD(name) api.name = reinterpret_cast<PFN_##name>(api.vkGetInstanceProcAddr(instance, #name));
    EMBER_VK_OPTIONAL_INSTANCE_FUNCTIONS(EMBER_VK_LOAD)
#undef EMBER_VK_LOAD
}

void load_device_functions(Api& api, VkDevice device) {
#define EMBER_VK_LOAD(name)                                                                      \
    api.name = reinterpret_cast<PFN_##name>(api.vkGetDeviceProcAddr(device, #name));             \
    if (!api.name) throw Error("vulkan: the driver has no " #name);
    EMBER_VK_DEVICE_FUNCTIONS(EMBER_VK_LOAD)
#undef EMBER_VK_LOAD
}

std::string result_name(VkResult result) {
    switch (result) {
        case VK_SUCCESS: return "VK_SUCCESS";
        case VK_NOT_READY: return "VK_NOT_READY";
        case VK_TIMEOUT: return "VK_TIMEOUT";
        case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
        case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
        case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
        case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
        case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
        case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
        case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
        case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
        case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
        case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
        default: return "VkResult " + std::to_string(static_cast<int>(result));
    }
}

void check(VkResult result, const char* what) {
    if (result == VK_SUCCESS) return;
    const std::string message = std::string("vulkan: ") + what + " failed (" + result_name(result) + ")";
    if (result == VK_ERROR_DEVICE_LOST || result == VK_ERROR_OUT_OF_DEVICE_MEMORY) throw DeviceError(message);
    throw Error(message);
}

}  // namespace ember::vulkan
