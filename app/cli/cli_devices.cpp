// SPDX-License-Identifier: MIT
// ember-cli devices [--json] [--bandwidth [--backend NAME] [--size MiB]]: the GPU devices Ember can use, with
// their memory heaps and the features its kernels use; --bandwidth also measures a device's memory bandwidth with
// a copy kernel (bytes read + bytes written per second), the yardstick of the decode benchmarks.
#include <chrono>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "ember/backend.h"

namespace ember::cli {

namespace {

// Median of `runs` timed copies of a `bytes` F32 tensor on the backend's device, in bytes moved per second.
double copy_bandwidth(Backend& backend, size_t bytes, int runs) {
    const int64_t cols = 1024;
    const int64_t rows = static_cast<int64_t>(bytes / (cols * 4));
    auto a = backend.allocate(static_cast<size_t>(rows * cols * 4));
    auto b = backend.allocate(static_cast<size_t>(rows * cols * 4));
    const Tensor ta = make_tensor(*a, gguf::TensorType::F32, rows, cols);
    const Tensor tb = make_tensor(*b, gguf::TensorType::F32, rows, cols);
    backend.convert(ta, tb);  // warm-up: pipeline creation, first touch
    backend.synchronize();
    std::vector<double> seconds;
    for (int r = 0; r < runs; ++r) {
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < 10; ++i) backend.convert(i % 2 ? tb : ta, i % 2 ? ta : tb);
        backend.synchronize();
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 10);
    }
    std::sort(seconds.begin(), seconds.end());
    return 2.0 * static_cast<double>(ta.bytes()) / seconds[seconds.size() / 2];
}

std::string gib(uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
    return text;
}

}  // namespace

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
            std::cout << "    heap " << gib(h.bytes) << (h.device_local ? " device-local" : " host")
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
        auto backend = make_backend(name);
        const double bw = copy_bandwidth(*backend, static_cast<size_t>(mib) << 20, 5);
        result["bandwidth"] = {{"backend", backend->name()}, {"bytes_per_second", bw}, {"buffer_mib", mib}};
        if (!args.has("--json"))
            std::printf("copy bandwidth on %s: %.1f GB/s (read + write, %lld MiB buffers)\n", backend->name().c_str(),
                        bw / 1e9, mib);
    }
    if (args.has("--json")) std::cout << result.dump(2) << "\n";
    return 0;
}

}  // namespace ember::cli
