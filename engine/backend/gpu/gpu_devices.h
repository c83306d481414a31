// SPDX-License-Identifier: MIT
// The HIP/CUDA devices for make_backend and list_devices: "cuda" / "hip" (device 0), "cuda:N" / "hip:N".
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace ember::gpu_backend {

// "cuda" or "hip": the name this build's GPU backend answers to.
const char* gpu_backend_name();
// spec: "" (device 0) or a device index.
std::unique_ptr<Backend> make_named_gpu_backend(const std::string& spec);
std::vector<DeviceInfo> list_gpu_devices(std::string* error);

}  // namespace ember::gpu_backend
