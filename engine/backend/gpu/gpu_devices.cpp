// SPDX-License-Identifier: MIT
// The HIP/CUDA devices: listing them, and the backend names "cuda", "hip", "cuda:N", "hip:N".
#include "backend/gpu/gpu_devices.h"

#include <charconv>
#include <string_view>

#include "backend/gpu/gpu_backend.h"

namespace ember::gpu_backend {

const char* gpu_backend_name() { return gpu::kRuntimeName; }

std::unique_ptr<Backend> make_named_gpu_backend(const std::string& spec) {
    GpuBackendOptions options;
    if (!spec.empty()) {
        const auto [end, ec] = std::from_chars(spec.data(), spec.data() + spec.size(), options.device);
        if (ec != std::errc() || end != spec.data() + spec.size())
            throw Error(std::string("backend '") + gpu::kRuntimeName + ":" + spec + "': expected a device index");
    }
    return make_gpu_backend(options);
}

std::vector<DeviceInfo> list_gpu_devices(std::string* error) {
    std::vector<DeviceInfo> out;
    int count = 0;
    const gpu::Error e = gpu::device_count(&count);
    if (e != gpu::kSuccess) {
        clear_last_error();
        if (error) *error = std::string(gpu::kRuntimeName) + ": " + gpu::error_string(e);
        return out;
    }
    for (int d = 0; d < count; ++d) {
        gpu::DeviceProp p{};
        if (gpu::device_properties(&p, d) != gpu::kSuccess) {
            clear_last_error();  // a device the runtime cannot describe is not listed
            continue;
        }
        char arch[64];
        gpu::arch_name(p, arch, sizeof arch);
        DeviceInfo info;
        info.index = d;
        info.backend = gpu::kRuntimeName;
        info.name = p.name;
        info.type = p.integrated ? "integrated GPU" : "discrete GPU";
        info.vendor_id = std::string_view(gpu::kRuntimeName) == "cuda" ? 0x10de : 0x1002;  // NVIDIA : AMD
        info.api_version = arch;
        DeviceMemoryHeap heap;
        heap.bytes = p.totalGlobalMem;
        heap.device_local = true;
        heap.host_visible = p.integrated != 0;
        info.heaps.push_back(heap);
        info.features.push_back(std::to_string(p.multiProcessorCount) + " compute units, warp " +
                                std::to_string(p.warpSize));
        info.features.push_back("integer dot products (ROCmFP4, Q4_0, Q8_0 mat x vec), graph replay of decode steps");
        const bool pageable = gpu::reads_pageable_memory(p);
        if (p.integrated)
            info.features.push_back(std::string("memory plan: weights stay in the file mapping (unified memory, ") +
                                    (pageable ? "pageable access" : "registered mapping") +
                                    "); KV cache, recurrent state and activations in device memory");
        else
            info.features.push_back("memory plan: weights uploaded once into device memory (" +
                                    format_gib(p.totalGlobalMem) + "); KV cache, recurrent state and activations there too");
        info.usable = true;
        out.push_back(std::move(info));
    }
    if (out.empty() && error) *error = std::string(gpu::kRuntimeName) + ": no device";
    return out;
}

}  // namespace ember::gpu_backend
