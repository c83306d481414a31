// SPDX-License-Identifier: MIT
// The devices Ember can run on, public: listing them (ember-cli devices), the memory a model needs, which device and
// placement the backend "auto" picks and why, and the copy bandwidth of a device (the decode benchmarks' yardstick).
// The backends themselves are private to the engine (backend/backend.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ember {

struct DeviceMemoryHeap {
    uint64_t bytes = 0;
    bool device_local = false;
    bool host_visible = false;
};

struct DeviceInfo {
    int index = 0;                       // N of "vulkan:N"
    std::string backend;                 // "vulkan"
    std::string name;
    std::string type;                    // "discrete GPU", "integrated GPU", "CPU", ...
    std::string api_version;
    std::vector<DeviceMemoryHeap> heaps;
    std::vector<std::string> features;   // what Ember's kernels can use (subgroup size, integer dot product, ...)
    bool usable = false;
    std::string unusable_reason;         // when not usable
    uint32_t vendor_id = 0;              // PCI vendor: 0x1002 AMD, 0x10de NVIDIA, 0x8086 Intel; 0 when unknown
};

// The GPU devices this build can use. Empty with `error` set when the build has no GPU backend or the system
// has no Vulkan loader.
std::vector<DeviceInfo> list_devices(std::string* error = nullptr);

// --- choosing the device (backend "auto") --------------------------------------------------------------------
// A CPU implementation of a GPU API (Mesa's lavapipe / llvmpipe, SwiftShader): never chosen unless asked for.
bool is_software_device(const DeviceInfo& device);
// The memory a model may use on the device: a discrete GPU's largest device-local heap; an integrated GPU's heaps
// together (its driver lets it use system memory beyond the carve-out). 0 for a software device.
uint64_t device_memory_budget(const DeviceInfo& device);

// What a model needs in memory to run at a context (estimate_memory_needs in ember/model_info.h fills it).
struct MemoryNeeds {
    uint64_t weights = 0;         // every tensor the model binds, drafts included
    uint64_t expert_weights = 0;  // the part only the mixture-of-experts products read (may stay on the host)
    uint64_t state = 0;           // KV caches, recurrent state with its snapshots and checkpoints, drafts' caches
    uint64_t scratch = 0;         // activations and logits of the largest batch
    uint64_t total() const { return weights + state + scratch; }
};

enum class Placement {
    cpu,               // everything on the CPU backend
    gpu,               // everything on the GPU
    gpu_host_experts,  // the experts in host memory, multiplied by the CPU; everything else on the GPU
};
std::string_view placement_name(Placement placement);
// Bytes as people read memory sizes: "12.3 GiB".
std::string format_gib(uint64_t bytes);  // "cpu", "gpu", "gpu + host experts"

struct DevicePolicy {
    std::string amd_backend = "vulkan";  // an AMD GPU that both Vulkan and HIP reach runs on this one
    uint64_t gpu_memory_limit = 0;       // > 0: use at most this much of a GPU's memory
    uint64_t host_memory = 0;            // system memory, which host experts must fit in (0: not checked)
    bool experts_on_host = false;        // keep the experts on the host even where the model would fit the GPU
};

struct DeviceChoice {
    std::string backend = "cpu";  // make_backend's name: "cpu", "vulkan:0", "cuda:0"
    std::string device = "CPU";   // the device's name, for people
    Placement placement = Placement::cpu;
    uint64_t memory_budget = 0;   // the GPU memory the fit was judged against
    std::string reason;           // one line: why this device and placement
    std::string notice;           // one line for the user when the model could not go wholly on a GPU it has
};

// The share of a GPU's memory a model may fill; the rest is for the driver, the desktop and compute buffers.
inline constexpr double kGpuMemoryShare = 0.9;

// The backend "auto" resolves to: the best real GPU among `devices` (discrete before integrated, then the larger
// memory; NVIDIA on CUDA where built; an AMD GPU on policy.amd_backend), with the model whole on it when it fits,
// its experts on the host when only the rest fits, else the CPU with a notice. Software devices are never chosen:
// the CPU backend is faster than a CPU implementation of Vulkan.
DeviceChoice choose_device(std::span<const DeviceInfo> devices, const MemoryNeeds& needs, const DevicePolicy& policy);
// The same fit rule for a backend named explicitly ("vulkan", "vulkan:1", "cuda"): a GPU named by the user is
// never swapped for the CPU, so a model too large for it keeps its experts on the host.
DeviceChoice place_on_backend(const std::string& name, std::span<const DeviceInfo> devices, const MemoryNeeds& needs,
                              const DevicePolicy& policy);

// The copy bandwidth of a backend's device (make_backend's names: "vulkan", "cuda:0", ...): bytes read + bytes
// written per second, the median of `runs` timed copies of a `bytes` buffer. Throws ember::Error like make_backend.
struct CopyBandwidth {
    std::string backend;  // the backend's own name for its device
    double bytes_per_second = 0;
};
CopyBandwidth measure_copy_bandwidth(const std::string& backend, size_t bytes, int runs = 5);

}  // namespace ember
