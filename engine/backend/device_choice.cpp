// SPDX-License-Identifier: MIT
// The backend "auto": which device a model runs on, and whether it fits there whole, with its experts on the host,
// or not at all (the CPU). Pure functions of a device list and a memory estimate, so tests feed them fake lists.
#include <algorithm>
#include <cctype>
#include <cstdio>

#include "backend/backend.h"
#include "ember/error.h"

namespace ember {

namespace {

constexpr uint32_t kAmd = 0x1002;
constexpr uint32_t kNvidia = 0x10de;

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::string backend_name(const DeviceInfo& d) {
    return d.backend + ":" + std::to_string(d.index);
}

int type_rank(const DeviceInfo& d) {
    if (d.type == "discrete GPU") return 3;
    if (d.type == "integrated GPU") return 2;
    if (d.type == "virtual GPU") return 1;
    return 0;
}

// Of two backends that reach one GPU, the one configured as faster for its vendor wins: CUDA for NVIDIA (the
// measured decode lead of the CUDA build), policy.amd_backend for AMD (Vulkan by default: the seed's RDNA decode
// figures), and otherwise Vulkan, the backend every vendor has.
int backend_rank(const DeviceInfo& d, const DevicePolicy& policy) {
    if (d.vendor_id == kNvidia) return d.backend == "cuda" ? 1 : 0;
    if (d.vendor_id == kAmd) return d.backend == policy.amd_backend ? 1 : 0;
    return d.backend == "vulkan" ? 1 : 0;
}

uint64_t budget_of(const DeviceInfo& d, const DevicePolicy& policy) {
    const uint64_t budget = device_memory_budget(d);
    return policy.gpu_memory_limit > 0 ? std::min(budget, policy.gpu_memory_limit) : budget;
}

// Memory sizes that differ by less than a tenth are the same device seen through two backends, or alike enough
// that the backend preference should decide.
bool much_larger(uint64_t a, uint64_t b) {
    return a > b + b / 10;
}

bool better(const DeviceInfo& a, const DeviceInfo& b, const DevicePolicy& policy) {
    if (type_rank(a) != type_rank(b)) return type_rank(a) > type_rank(b);
    const uint64_t ma = device_memory_budget(a), mb = device_memory_budget(b);
    if (much_larger(ma, mb) || much_larger(mb, ma)) return ma > mb;
    if (backend_rank(a, policy) != backend_rank(b, policy)) return backend_rank(a, policy) > backend_rank(b, policy);
    return false;  // keep list order
}

std::string describe(const DeviceInfo& d, uint64_t budget) {
    return d.name + " (" + d.type + ", " + format_gib(budget) + " usable)";
}

// Places the model on `d`: whole, or with its experts on the host, or nowhere (returns false).
bool place(const DeviceInfo& d, const MemoryNeeds& needs, const DevicePolicy& policy, DeviceChoice& choice) {
    const uint64_t budget = budget_of(d, policy);
    const auto room = static_cast<uint64_t>(static_cast<double>(budget) * kGpuMemoryShare);
    choice.backend = backend_name(d);
    choice.device = d.name;
    choice.memory_budget = budget;
    const std::string needed = "the model needs " + format_gib(needs.total());
    const bool fits = needs.total() <= room;
    if (fits && !(policy.experts_on_host && needs.expert_weights > 0)) {
        choice.placement = Placement::gpu;
        choice.reason = describe(d, budget) + ": " + needed;
        return true;
    }
    const uint64_t without_experts = needs.total() - needs.expert_weights;
    const bool host_fits = policy.host_memory == 0 ||
                           needs.expert_weights <= static_cast<uint64_t>(static_cast<double>(policy.host_memory) * 0.9);
    if (needs.expert_weights > 0 && without_experts <= room && host_fits) {
        choice.placement = Placement::gpu_host_experts;
        const std::string split = "its experts (" + format_gib(needs.expert_weights) +
                                  ") stay in host memory and run on the CPU, the rest (" + format_gib(without_experts) +
                                  ") on the GPU";
        if (fits) {  // policy.experts_on_host
            choice.reason = describe(d, budget) + ": as asked, " + split;
            return true;
        }
        choice.reason = describe(d, budget) + ": " + needed + ", so " + split;
        choice.notice = "The model (" + format_gib(needs.total()) + ") is larger than " + d.name + "'s " + format_gib(budget) +
                        ": its experts run on the CPU, the rest on the GPU";
        return true;
    }
    return false;
}

}  // namespace

bool is_software_device(const DeviceInfo& device) {
    if (device.type == "CPU") return true;
    const std::string name = lower(device.name);
    return name.find("llvmpipe") != std::string::npos || name.find("lavapipe") != std::string::npos ||
           name.find("swiftshader") != std::string::npos;
}

uint64_t device_memory_budget(const DeviceInfo& device) {
    if (is_software_device(device)) return 0;
    uint64_t largest_local = 0, all = 0;
    for (const DeviceMemoryHeap& h : device.heaps) {
        all += h.bytes;
        if (h.device_local) largest_local = std::max(largest_local, h.bytes);
    }
    return device.type == "integrated GPU" ? all : largest_local;
}

std::string format_gib(uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
    return text;
}

std::string_view placement_name(Placement placement) {
    switch (placement) {
        case Placement::cpu:
            return "cpu";
        case Placement::gpu:
            return "gpu";
        case Placement::gpu_host_experts:
            return "gpu + host experts";
    }
    return "cpu";
}

DeviceChoice choose_device(std::span<const DeviceInfo> devices, const MemoryNeeds& needs, const DevicePolicy& policy) {
    std::vector<const DeviceInfo*> gpus;
    std::string software;
    for (const DeviceInfo& d : devices) {
        if (!d.usable) continue;
        if (is_software_device(d)) {
            software = d.name;
            continue;
        }
        gpus.push_back(&d);
    }
    std::stable_sort(gpus.begin(), gpus.end(),
                     [&](const DeviceInfo* a, const DeviceInfo* b) { return better(*a, *b, policy); });

    DeviceChoice choice;
    for (const DeviceInfo* d : gpus)
        if (place(*d, needs, policy, choice)) return choice;

    choice = DeviceChoice{};
    if (!gpus.empty()) {
        const DeviceInfo& best = *gpus.front();
        const uint64_t budget = budget_of(best, policy);
        choice.reason = "the model needs " + format_gib(needs.total()) + ", more than " + describe(best, budget) +
                        " can hold, even with its experts on the host";
        choice.notice = "The model (" + format_gib(needs.total()) + ") does not fit in " + best.name + "'s " + format_gib(budget) +
                        ": it runs on the CPU";
    } else if (!software.empty()) {
        choice.reason = "no GPU: " + software + " is a CPU implementation of Vulkan, slower than Ember's CPU backend";
    } else {
        choice.reason = "no GPU found";
    }
    return choice;
}

DeviceChoice place_on_backend(const std::string& name, std::span<const DeviceInfo> devices, const MemoryNeeds& needs,
                              const DevicePolicy& policy) {
    DeviceChoice choice;
    if (name == "cpu") {
        choice.reason = "the CPU backend was asked for";
        return choice;
    }
    const size_t colon = name.find(':');
    const std::string backend = name.substr(0, colon);
    const std::string selector = colon == std::string::npos ? std::string() : name.substr(colon + 1);
    const bool numeric = !selector.empty() &&
                         std::all_of(selector.begin(), selector.end(), [](unsigned char c) { return std::isdigit(c); });
    // The device make_backend(name) opens: by index, by part of its name, or the best of the backend's devices.
    const auto preferred = [&](const DeviceInfo& a, const DeviceInfo& b) {
        if (is_software_device(a) != is_software_device(b)) return !is_software_device(a);
        return better(a, b, policy);
    };
    const DeviceInfo* device = nullptr;
    for (const DeviceInfo& d : devices) {
        if (d.backend != backend || !d.usable) continue;
        if (selector.empty()) {
            if (!device || preferred(d, *device)) device = &d;
        } else if (numeric ? std::to_string(d.index) == selector
                           : lower(d.name).find(lower(selector)) != std::string::npos) {
            device = &d;
            break;
        }
    }
    if (!device) {
        // make_backend reports what is missing; the placement is then moot.
        choice.backend = name;
        choice.device = name;
        choice.placement = Placement::gpu;
        choice.reason = "asked for";
        return choice;
    }
    if (is_software_device(*device)) {  // its memory is the host's: only experts_on_host splits the model
        choice.backend = backend_name(*device);
        choice.device = device->name;
        const bool split = policy.experts_on_host && needs.expert_weights > 0;
        choice.placement = split ? Placement::gpu_host_experts : Placement::gpu;
        choice.reason = device->name + " was asked for (a CPU implementation of " + device->backend + ")" +
                        (split ? ", its experts on the CPU backend as asked" : "");
        return choice;
    }
    if (place(*device, needs, policy, choice)) {
        choice.reason = "asked for " + choice.reason;
        return choice;
    }
    // Asked for by name: it runs there even if it does not fit (the allocation says so if it really cannot).
    choice.placement = needs.expert_weights > 0 ? Placement::gpu_host_experts : Placement::gpu;
    choice.reason =
        "asked for " + describe(*device, choice.memory_budget) + ", though the model needs " + format_gib(needs.total());
    choice.notice =
        "The model (" + format_gib(needs.total()) + ") may not fit in " + device->name + "'s " + format_gib(choice.memory_budget);
    return choice;
}

}  // namespace ember
