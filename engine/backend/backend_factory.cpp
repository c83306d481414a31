// SPDX-License-Identifier: MIT
// make_backend and list_devices: backends by name, and the devices of the GPU backends built in.
#include <cstdlib>

#include "backend/wrap/device_fault_backend.h"
#include "backend/backend.h"

#ifdef EMBER_HAVE_VULKAN
#include "backend/vulkan/vk_devices.h"
#endif
#ifdef EMBER_HAVE_GPU
#include "backend/gpu/gpu_devices.h"
#endif

namespace ember {

namespace {

std::unique_ptr<Backend> make_named_backend(const std::string& name, const BackendOptions& options) {
    if (name == "cpu") return make_cpu_backend({options.threads});
    if (name == "vulkan" || name.rfind("vulkan:", 0) == 0) {
#ifdef EMBER_HAVE_VULKAN
        return vulkan::make_vulkan_backend(name == "vulkan" ? std::string() : name.substr(7));
#else
        throw Error("backend 'vulkan': this build of Ember has no Vulkan backend (configure with -DEMBER_VULKAN=ON)");
#endif
    }
#ifdef EMBER_HAVE_GPU
    const std::string gpu = gpu_backend::gpu_backend_name();  // "cuda" or "hip"
    if (name == gpu || name.rfind(gpu + ":", 0) == 0)
        return gpu_backend::make_named_gpu_backend(name == gpu ? std::string() : name.substr(gpu.size() + 1));
#endif
    if (name == "cuda" || name == "hip" || name.rfind("cuda:", 0) == 0 || name.rfind("hip:", 0) == 0)
        throw Error("backend '" + name + "': this build of Ember has no " + name.substr(0, name.find(':')) +
                    " backend (configure with -DEMBER_" + (name[0] == 'c' ? "CUDA" : "HIP") + "=ON)");
    throw Error("unknown backend '" + name +
                "' (auto, cpu, vulkan, vulkan:N, vulkan:NAME, cuda, cuda:N, hip or hip:N)");
}

}  // namespace

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& options) {
    const std::string resolved = name == "auto" ? choose_device(list_devices(), {}, {}).backend : name;
    return with_injected_device_fault(make_named_backend(resolved, options));
}

std::vector<DeviceInfo> list_devices(std::string* error) {
    std::vector<DeviceInfo> devices;
    std::string why;
#ifdef EMBER_HAVE_VULKAN
    devices = vulkan::list_vulkan_devices(&why);
#endif
#ifdef EMBER_HAVE_GPU
    std::string gpu_why;
    for (DeviceInfo& d : gpu_backend::list_gpu_devices(&gpu_why)) devices.push_back(std::move(d));
    if (!gpu_why.empty()) why += (why.empty() ? "" : "; ") + gpu_why;
#endif
#if !defined(EMBER_HAVE_VULKAN) && !defined(EMBER_HAVE_GPU)
    why = "this build of Ember has no GPU backend";
#endif
    if (error && devices.empty()) *error = why;
    return devices;
}

}  // namespace ember
