// SPDX-License-Identifier: MIT
// The GPU backends a test binary was built with, by make_backend name: "vulkan" where the Vulkan backend is built
// (CI runs it on lavapipe, so a missing Vulkan device is a failure, not a skip) and the HIP/CUDA backend in
// EMBER_HIP / EMBER_CUDA builds (skipped where no such GPU is present: CI only compiles it).
#pragma once

#include <cctype>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace ember::test {

inline std::vector<std::string> gpu_backend_names() {
    std::vector<std::string> names;
#ifdef EMBER_TEST_VULKAN
    names.emplace_back("vulkan");
#endif
#ifdef EMBER_GPU_BACKEND_NAME
    names.emplace_back(EMBER_GPU_BACKEND_NAME);
#endif
    return names;
}

// A GoogleTest parameter name for a (backend, fixture path) case: "vulkan_dense_llama_f32_gguf".
inline std::string case_name(const std::string& backend, const std::string& fixture) {
    std::string s = backend + "_" + fixture;
    for (char& c : s)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return s;
}

// Why the tests of `backend` cannot run here, or "" when they can (Vulkan always runs: make_backend reports
// what is missing).
inline std::string gpu_backend_missing(const std::string& backend) {
    if (backend == "vulkan") return "";
    for (const DeviceInfo& d : list_devices())
        if (d.backend == backend && d.usable) return "";
    return backend + ": no device here";
}

}  // namespace ember::test
