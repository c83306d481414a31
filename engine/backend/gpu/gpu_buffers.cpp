// SPDX-License-Identifier: MIT
// Device and mapped buffers of the HIP/CUDA backend, and the kernel views of tensors in them.
#include "backend/gpu/gpu_buffers.h"

#include <fstream>
#include <sstream>

namespace ember::gpu_backend {

DeviceBuffer::DeviceBuffer(std::shared_ptr<GpuContext> ctx, size_t bytes) : ctx_(std::move(ctx)), size_(bytes) {
    void* p = nullptr;
    const gpu::Error e = gpu::malloc_device(&p, bytes ? bytes : 1);
    if (e != gpu::kSuccess) {
        clear_last_error();
        throw DeviceError(std::string(gpu::kRuntimeName) + " backend: cannot allocate " + std::to_string(bytes) +
                    " bytes of device memory: " + gpu::error_string(e));
    }
    data_ = static_cast<std::byte*>(p);
}

DeviceBuffer::~DeviceBuffer() {
    try {
        ctx_->synchronize();
    } catch (const Error&) {  // a failed step was reported where it ran; the memory still goes back
    }
    release(gpu::free_device(data_));
}

InPlaceBuffer::~InPlaceBuffer() {
    try {
        ctx_->synchronize();
    } catch (const Error&) {
    }
}

namespace {

// The mapping [start, end) of /proc/self/maps that holds address a.
bool find_mapping(uintptr_t a, uintptr_t& start, uintptr_t& end) {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        std::istringstream in(line);
        std::string range;
        in >> range;
        const size_t dash = range.find('-');
        if (dash == std::string::npos) continue;
        const uintptr_t s = std::stoull(range.substr(0, dash), nullptr, 16);
        const uintptr_t e = std::stoull(range.substr(dash + 1), nullptr, 16);
        if (a >= s && a < e) {
            start = s;
            end = e;
            return true;
        }
    }
    return false;
}

}  // namespace

HostRegistry::~HostRegistry() {
    for (auto& [start, region] : regions_)
        if (region.device) release(gpu::host_unregister(reinterpret_cast<void*>(start)));
}

std::byte* HostRegistry::device_address(const std::byte* p, std::string& why) {
    const auto a = reinterpret_cast<uintptr_t>(p);
    std::lock_guard lock(mutex_);
    auto it = regions_.upper_bound(a);
    if (it != regions_.begin()) {
        --it;
        if (a < it->second.end) {
            why = it->second.why;
            return it->second.device ? it->second.device + (a - it->first) : nullptr;
        }
    }
    uintptr_t start = 0, end = 0;
    if (!find_mapping(a, start, end)) {
        why = "the weights are not in a file mapping listed in /proc/self/maps";
        return nullptr;
    }
    Region region;
    region.end = end;
    void* host = reinterpret_cast<void*>(start);
    gpu::Error e = gpu::host_register_read_only(host, end - start);
    if (e == gpu::kSuccess) {
        void* device = nullptr;
        e = gpu::host_device_pointer(&device, host);
        if (e == gpu::kSuccess) {
            region.device = static_cast<std::byte*>(device);
        } else {
            // Undoing the registration of a region that will be copied instead; `e`, the failure that decided
            // that, is what gets reported, so a second failure here changes nothing.
            static_cast<void>(gpu::host_unregister(host));
        }
    }
    if (e != gpu::kSuccess) {
        clear_last_error();
        region.why = std::string("the runtime refused to map the file for the device (") + gpu::error_string(e) + ")";
    }
    why = region.why;
    std::byte* base = region.device;
    regions_[start] = std::move(region);
    return base ? base + (a - start) : nullptr;
}

GpuBuffer& gpu_buffer(const Tensor& t, const char* what) {
    auto* b = dynamic_cast<GpuBuffer*>(t.buffer);
    require(b != nullptr, [what] { return std::string(what) + ": the tensor is not in this backend's memory"; });
    return *b;
}

std::byte* device_data(const Tensor& t, const char* what) {
    // A strided view (column_range) ends with the elements of its last row, not a whole row stride after them.
    const size_t extent =
        t.rows > 0 ? static_cast<size_t>(t.rows - 1) * t.row_stride + gguf::row_bytes(t.type, t.cols) : 0;
    require(t.offset + extent <= t.buffer->size(),
            [what] { return std::string(what) + ": the tensor runs past the end of its buffer"; });
    return gpu_buffer(t, what).device() + t.offset;
}

gpu_kernels::Rows f32_rows(const Tensor& t, const char* what) {
    require(t.type == gguf::TensorType::F32, [what] { return std::string(what) + " must be f32"; });
    require(t.row_stride % 4 == 0,
            [what] { return std::string(what) + ": row stride is not a whole number of floats"; });
    return {reinterpret_cast<float*>(device_data(t, what)), t.rows, t.cols, static_cast<int64_t>(t.row_stride / 4)};
}

gpu_kernels::Weights weights_of(const Tensor& t, const char* what) {
    require(gpu_kernels::weight_type_supported(static_cast<uint32_t>(t.type)), [&] {
        return std::string(what) + ": weight type " + std::string(gguf::traits(t.type).name) +
               " is not supported by this backend";
    });
    return {static_cast<uint32_t>(t.type), reinterpret_cast<const uint8_t*>(device_data(t, what)), t.rows, t.cols,
            t.row_stride};
}

gpu_kernels::TypedRows typed_rows(const Tensor& t, const char* what) {
    return {static_cast<uint32_t>(t.type), reinterpret_cast<uint8_t*>(device_data(t, what)), t.rows, t.cols,
            t.row_stride};
}

gpu_kernels::Gated gated_of(Activation act) {
    switch (act) {
        case Activation::silu: return gpu_kernels::Gated::silu;
        case Activation::gelu: return gpu_kernels::Gated::gelu;
        default: return gpu_kernels::Gated::swiglu_clamped;
    }
}

}  // namespace ember::gpu_backend
