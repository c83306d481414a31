// SPDX-License-Identifier: MIT
// The machine's memory, for the fit estimate: system memory from /proc/meminfo and the GPU's from a provider that a
// GPU backend installs (the default provider knows nothing and says so). Qt-free; never allocates per byte read.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "fit_estimate.h"

namespace ember::models {

// Device-local memory of the GPU the model would run on, or nullopt when unknown.
using GpuMemoryProvider = std::function<std::optional<uint64_t>()>;

// Parses the text of /proc/meminfo (MemTotal, MemAvailable in kB). Missing fields stay 0.
MemoryBudget parse_meminfo(std::string_view text);
// Reads /proc/meminfo (zeros where it cannot be read) and asks `gpu` for the GPU's memory.
MemoryBudget probe_memory(const GpuMemoryProvider& gpu = {});

}  // namespace ember::models
