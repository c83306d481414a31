// SPDX-License-Identifier: MIT
// make_backend and list_devices: backends by name, and the devices of the GPU backends built in.
#include <cstdlib>

#include "ember/backend.h"

#ifdef EMBER_HAVE_VULKAN
#include "backend/vulkan/vk_devices.h"
#endif

namespace ember {

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& options) {
    if (name == "cpu") return make_cpu_backend({options.threads});
    if (name == "vulkan" || name.rfind("vulkan:", 0) == 0) {
#ifdef EMBER_HAVE_VULKAN
        return vulkan::make_vulkan_backend(name == "vulkan" ? std::string() : name.substr(7));
#else
        throw Error("backend 'vulkan': this build of Ember has no Vulkan backend (configure with -DEMBER_VULKAN=ON)");
#endif
    }
    throw Error("unknown backend '" + name + "' (cpu, vulkan, vulkan:N or vulkan:NAME)");
}

std::vector<DeviceInfo> list_devices(std::string* error) {
#ifdef EMBER_HAVE_VULKAN
    return vulkan::list_vulkan_devices(error);
#else
    if (error) *error = "this build of Ember has no GPU backend";
    return {};
#endif
}

}  // namespace ember
