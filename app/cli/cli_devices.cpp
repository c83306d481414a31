// SPDX-License-Identifier: MIT
// ember-cli devices [--json] [--bandwidth [--backend NAME] [--size MiB]]: the GPU devices Ember can use, with
// their memory heaps and the features its kernels use; --bandwidth also measures a device's memory bandwidth with
// a copy kernel (bytes read + bytes written per second), the yardstick of the decode benchmarks.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "ember/devices.h"

namespace ember::cli {

int run_devices(const Args& raw) {
    const ParsedArgs args(raw, {{"--json", "", false}, {"--bandwidth", "", false}, {"--backend", ""}, {"--size", ""}});
    std::string error;
    const std::vector<DeviceInfo> devices = list_devices(&error);
    // The device the backend "auto" takes for a model that fits (ember-cli info FILE judges a particular model).
    const DeviceChoice choice = choose_device(devices, {}, {});
    const auto is_default = [&](const DeviceInfo& d) {
        return choice.backend == d.backend + ":" + std::to_string(d.index);
    };
    nlohmann::ordered_json json = nlohmann::ordered_json::array();
    for (const DeviceInfo& d : devices) {
        nlohmann::ordered_json heaps = nlohmann::ordered_json::array();
        for (const DeviceMemoryHeap& h : d.heaps)
            heaps.push_back({{"bytes", h.bytes}, {"device_local", h.device_local}, {"host_visible", h.host_visible}});
        json.push_back({{"index", d.index}, {"backend", d.backend}, {"name", d.name}, {"type", d.type},
                        {"api_version", d.api_version}, {"usable", d.usable}, {"unusable_reason", d.unusable_reason},
                        {"heaps", heaps}, {"features", d.features}, {"software", is_software_device(d)},
                        {"memory_budget_bytes", device_memory_budget(d)}, {"default", is_default(d)}});
        if (args.has("--json")) continue;
        std::cout << d.backend << ":" << d.index << "  " << d.name << " (" << d.type << (d.backend == "vulkan" ? ", Vulkan " : ", ") << d.api_version
                  << ")" << (d.usable ? "" : "  not usable: " + d.unusable_reason)
                  << (is_default(d) ? "  [default]" : "") << "\n";
        for (const DeviceMemoryHeap& h : d.heaps)
            std::cout << "    heap " << format_gib(h.bytes) << (h.device_local ? " device-local" : " host")
                      << (h.host_visible ? ", host-visible" : "") << "\n";
        if (!d.features.empty()) {
            std::cout << "    features:";
            for (size_t i = 0; i < d.features.size(); ++i) std::cout << (i ? ", " : " ") << d.features[i];
            std::cout << "\n";
        }
    }
    if (devices.empty() && !args.has("--json")) std::cout << "no GPU devices: " << error << "\n";
    if (!args.has("--json"))
        std::cout << "default (--backend auto): " << choice.backend << ": " << choice.reason << "\n";

    nlohmann::ordered_json result = {{"devices", json},
                                     {"default", {{"backend", choice.backend}, {"reason", choice.reason}}}};
    if (!error.empty()) result["error"] = error;
    if (args.has("--bandwidth")) {
        const std::string name = args.get("--backend", "vulkan");
        const long long mib = args.get_int("--size", 1024);
        if (mib < 1) throw UsageError("--size must be at least 1 (MiB)");
        const CopyBandwidth bw = measure_copy_bandwidth(name, static_cast<size_t>(mib) << 20);
        result["bandwidth"] = {{"backend", bw.backend}, {"bytes_per_second", bw.bytes_per_second}, {"buffer_mib", mib}};
        if (!args.has("--json"))
            std::printf("copy bandwidth on %s: %.1f GB/s (read + write, %lld MiB buffers)\n", bw.backend.c_str(),
                        bw.bytes_per_second / 1e9, mib);
    }
    if (args.has("--json")) std::cout << result.dump(2) << "\n";
    return 0;
}

}  // namespace ember::cli
