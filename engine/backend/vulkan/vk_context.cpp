// SPDX-License-Identifier: MIT
// The process's Vulkan instance, device selection, and one logical device with its queue.
#include "backend/vulkan/vk_context.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>

#include "ember/error.h"

namespace ember::vulkan {

namespace {

std::string version_string(uint32_t v) {
    return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
           std::to_string(VK_API_VERSION_PATCH(v));
}

const char* type_name(VkPhysicalDeviceType type) {
    switch (type) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
        default: return "other";
    }
}

int type_score(VkPhysicalDeviceType type) {
    switch (type) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 5;
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 4;
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 3;
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return 2;
        default: return 1;
    }
}

bool has_extension(const std::vector<VkExtensionProperties>& list, const char* name) {
    return std::any_of(list.begin(), list.end(),
                       [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

uint32_t find_memory_type(const VkPhysicalDeviceMemoryProperties& mp, VkMemoryPropertyFlags want,
                          VkMemoryPropertyFlags avoid = 0) {
    for (uint32_t i = 0; i < mp.memoryTypeCount; ++i) {
        const VkMemoryPropertyFlags f = mp.memoryTypes[i].propertyFlags;
        if ((f & want) == want && (f & avoid) == 0) return i;
    }
    return UINT32_MAX;
}

// The device offers a 16x16x16 product of f16 A and B into f32 C and result for a subgroup.
bool has_coopmat_shape(const Api& api, VkPhysicalDevice device) {
    if (!api.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR) return false;
    uint32_t count = 0;
    if (api.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(device, &count, nullptr) != VK_SUCCESS) return false;
    std::vector<VkCooperativeMatrixPropertiesKHR> shapes(count, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR});
    if (api.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(device, &count, shapes.data()) != VK_SUCCESS)
        return false;
    shapes.resize(count);
    return std::any_of(shapes.begin(), shapes.end(), [](const VkCooperativeMatrixPropertiesKHR& p) {
        return p.MSize == 16 && p.NSize == 16 && p.KSize == 16 && p.AType == VK_COMPONENT_TYPE_FLOAT16_KHR &&
               p.BType == VK_COMPONENT_TYPE_FLOAT16_KHR && p.CType == VK_COMPONENT_TYPE_FLOAT32_KHR &&
               p.ResultType == VK_COMPONENT_TYPE_FLOAT32_KHR && p.scope == VK_SCOPE_SUBGROUP_KHR;
    });
}

}  // namespace

Instance::Instance() {
    load_global_functions(api_, loader_entry_point());
    uint32_t version = VK_API_VERSION_1_0;
    if (api_.vkEnumerateInstanceVersion) api_.vkEnumerateInstanceVersion(&version);
    if (version < VK_API_VERSION_1_2)
        throw Error("vulkan: the loader offers Vulkan " + version_string(version) + ", Ember needs 1.2");
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "Ember";
    app.pEngineName = "Ember";
    // 1.3 where the loader has it, so that 1.3 devices offer their 1.3 features (the integer dot product).
    api_version_ = version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2;
    app.apiVersion = api_version_;
    VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ci.pApplicationInfo = &app;
    check(api_.vkCreateInstance(&ci, nullptr, &instance_), "vkCreateInstance");
    load_instance_functions(api_, instance_);
}

Instance::~Instance() {
    if (instance_) api_.vkDestroyInstance(instance_, nullptr);
}

std::shared_ptr<const Instance> shared_instance() {
    static std::mutex mutex;
    // Never destroyed: NVIDIA's driver crashes when the instance is destroyed during the process's exit (static
    // destructors), and the process is ending anyway.
    static auto* instance = new std::shared_ptr<const Instance>();
    std::lock_guard lock(mutex);
    if (!*instance) *instance = std::make_shared<const Instance>();
    return *instance;
}

std::vector<PhysicalDeviceSummary> Instance::devices() const {
    uint32_t count = 0;
    check(api_.vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> handles(count);
    check(api_.vkEnumeratePhysicalDevices(instance_, &count, handles.data()), "vkEnumeratePhysicalDevices");

    std::vector<PhysicalDeviceSummary> out;
    for (uint32_t index = 0; index < count; ++index) {
        PhysicalDeviceSummary s;
        s.handle = handles[index];
        VkPhysicalDeviceProperties props;
        api_.vkGetPhysicalDeviceProperties(s.handle, &props);
        VkPhysicalDeviceMemoryProperties mp;
        api_.vkGetPhysicalDeviceMemoryProperties(s.handle, &mp);
        uint32_t n_ext = 0;
        api_.vkEnumerateDeviceExtensionProperties(s.handle, nullptr, &n_ext, nullptr);
        std::vector<VkExtensionProperties> ext(n_ext);
        api_.vkEnumerateDeviceExtensionProperties(s.handle, nullptr, &n_ext, ext.data());

        DeviceInfo& info = s.info;
        info.index = static_cast<int>(index);
        info.backend = "vulkan";
        info.name = props.deviceName;
        info.type = type_name(props.deviceType);
        info.api_version = version_string(props.apiVersion);
        info.vendor_id = props.vendorID;
        for (uint32_t h = 0; h < mp.memoryHeapCount; ++h) {
            DeviceMemoryHeap heap;
            heap.bytes = mp.memoryHeaps[h].size;
            heap.device_local = (mp.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
            for (uint32_t t = 0; t < mp.memoryTypeCount; ++t)
                if (mp.memoryTypes[t].heapIndex == h &&
                    (mp.memoryTypes[t].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
                    heap.host_visible = true;
            info.heaps.push_back(heap);
        }

        std::string missing;
        if (props.apiVersion < VK_API_VERSION_1_2) missing = "Vulkan 1.2";
        VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
        VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
        VkPhysicalDeviceShaderIntegerDotProductFeatures fdot{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
        VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
        VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
        VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
        const bool dot_extension = has_extension(ext, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
        const bool has_dot =
            (props.apiVersion >= VK_API_VERSION_1_3 && api_version_ >= VK_API_VERSION_1_3) || dot_extension;
        VkPhysicalDeviceCooperativeMatrixFeaturesKHR fcoop{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
        const bool coop_extension = has_extension(ext, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
        if (missing.empty()) {
            f2.pNext = &f11;
            f11.pNext = &f12;
            if (has_dot) f12.pNext = &fdot;
            if (coop_extension) {
                fcoop.pNext = f12.pNext;
                f12.pNext = &fcoop;
            }
            api_.vkGetPhysicalDeviceFeatures2(s.handle, &f2);
            p2.pNext = &sub;
            api_.vkGetPhysicalDeviceProperties2(s.handle, &p2);
            if (!has_extension(ext, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME)) missing = "VK_KHR_push_descriptor";
            else if (!f11.storageBuffer16BitAccess) missing = "16-bit storage";
            else if (!f12.storageBuffer8BitAccess) missing = "8-bit storage";
            else if (!f12.shaderInt8 || !f2.features.shaderInt16) missing = "8- and 16-bit integers";
            else if (!(sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ||
                     !(sub.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT))
                missing = "subgroup arithmetic in compute shaders";
        }
        if (missing.empty()) {
            info.features.push_back("subgroup " + std::to_string(sub.subgroupSize));
            if (sub.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) s.shuffle_width = sub.subgroupSize;
            if (f12.shaderFloat16) info.features.push_back("fp16 arithmetic");
            if (has_dot && fdot.shaderIntegerDotProduct) {
                info.features.push_back("integer dot product");
                s.integer_dot = true;
                s.integer_dot_extension = dot_extension;
            }
            s.cooperative_matrix = coop_extension && fcoop.cooperativeMatrix && f12.shaderFloat16 &&
                                   f12.vulkanMemoryModel && sub.subgroupSize <= 64 &&
                                   has_coopmat_shape(api_, s.handle);
            if (s.cooperative_matrix) info.features.push_back("cooperative matrix (KHR)");
            if (has_extension(ext, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME))
                info.features.push_back("cooperative matrix (NV)");
            if (find_memory_type(mp, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) !=
                UINT32_MAX)
                info.features.push_back("host-visible device memory");
            s.score = type_score(props.deviceType);
            info.usable = true;
        } else {
            info.unusable_reason = "lacks " + missing;
        }
        out.push_back(std::move(s));
    }
    return out;
}

Context::Context(const std::string& selector) : instance_(shared_instance()) {
    api_ = instance_->api();
    const std::vector<PhysicalDeviceSummary> all = instance_->devices();
    if (all.empty()) throw Error("vulkan: no Vulkan device is present");
    const PhysicalDeviceSummary* chosen = nullptr;
    if (selector.empty()) {
        for (const PhysicalDeviceSummary& s : all)
            if (s.score > 0 && (!chosen || s.score > chosen->score)) chosen = &s;
        if (!chosen)
            throw Error("vulkan: no usable device (" + all[0].info.name + " " + all[0].info.unusable_reason + ")");
    } else {
        const bool numeric = std::all_of(selector.begin(), selector.end(), [](char c) { return std::isdigit(c); });
        for (const PhysicalDeviceSummary& s : all) {
            if (numeric ? std::to_string(s.info.index) == selector
                        : lower(s.info.name).find(lower(selector)) != std::string::npos) {
                chosen = &s;
                break;
            }
        }
        if (!chosen) throw Error("vulkan: no device matches '" + selector + "' (ember-cli devices lists them)");
        if (!chosen->info.usable)
            throw Error("vulkan: device " + chosen->info.name + " " + chosen->info.unusable_reason);
    }
    physical_ = chosen->handle;
    info_ = chosen->info;
    api_.vkGetPhysicalDeviceProperties(physical_, &properties_);

    uint32_t n_families = 0;
    api_.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n_families, nullptr);
    std::vector<VkQueueFamilyProperties> families(n_families);
    api_.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n_families, families.data());
    queue_family_ = UINT32_MAX;
    for (uint32_t i = 0; i < n_families; ++i)
        if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
            queue_family_ = i;
            timestamp_bits_ = families[i].timestampValidBits;
            break;
        }
    if (queue_family_ == UINT32_MAX) throw Error("vulkan: device " + info_.name + " has no compute queue");

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = queue_family_;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    f12.storageBuffer8BitAccess = VK_TRUE;
    f12.shaderInt8 = VK_TRUE;
    VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    f11.storageBuffer16BitAccess = VK_TRUE;
    f11.pNext = &f12;
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.features.shaderInt16 = VK_TRUE;
    f2.pNext = &f11;
    VkPhysicalDeviceShaderIntegerDotProductFeatures fdot{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
    fdot.shaderIntegerDotProduct = VK_TRUE;
    std::vector<const char*> extensions = {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
    integer_dot_ = chosen->integer_dot;
    shuffle_width_ = chosen->shuffle_width;
    if (integer_dot_) {
        f12.pNext = &fdot;
        if (chosen->integer_dot_extension) extensions.push_back(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
    }
    // The cooperative-matrix kernels: f16 arithmetic, and the Vulkan memory model that glslang's cooperative
    // matrix code declares.
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR fcoop{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
    cooperative_matrix_ = chosen->cooperative_matrix;
    if (cooperative_matrix_) {
        fcoop.cooperativeMatrix = VK_TRUE;
        fcoop.pNext = f12.pNext;
        f12.pNext = &fcoop;
        f12.shaderFloat16 = VK_TRUE;
        f12.vulkanMemoryModel = VK_TRUE;
        extensions.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
    }
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &f2;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    dci.ppEnabledExtensionNames = extensions.data();
    check(api_.vkCreateDevice(physical_, &dci, nullptr, &device_), "vkCreateDevice");
    load_device_functions(api_, device_);
    api_.vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

    VkPhysicalDeviceMemoryProperties mp;
    api_.vkGetPhysicalDeviceMemoryProperties(physical_, &mp);
    constexpr VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    constexpr VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    const bool shares_memory = properties_.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
                               properties_.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    const uint32_t unified = find_memory_type(mp, local | host);
    if (shares_memory && unified != UINT32_MAX) {
        // APUs and CPU implementations: one memory, so every buffer is mapped and nothing is staged.
        memory_.unified = true;
        memory_.device_local = memory_.staging = memory_.readback = unified;
    } else {
        memory_.device_local = find_memory_type(mp, local, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
        if (memory_.device_local == UINT32_MAX) memory_.device_local = find_memory_type(mp, local);
        memory_.staging = find_memory_type(mp, host, local);
        if (memory_.staging == UINT32_MAX) memory_.staging = find_memory_type(mp, host);
        memory_.readback = find_memory_type(mp, host | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
        if (memory_.readback == UINT32_MAX) memory_.readback = memory_.staging;
    }
    if (memory_.device_local == UINT32_MAX || memory_.staging == UINT32_MAX)
        throw Error("vulkan: device " + info_.name + " has no usable memory types");
}

Context::~Context() {
    if (device_) {
        api_.vkDeviceWaitIdle(device_);
        api_.vkDestroyDevice(device_, nullptr);
    }
}

}  // namespace ember::vulkan
