// SPDX-License-Identifier: MIT
// GPU time per launch label, for finding where a forward pass spends its time on the HIP/CUDA backend: with
// EMBER_GPU_PROFILE=1 in the environment every step runs eagerly (no graphs), an event is recorded after each
// launch, and the time between consecutive events is charged to the launch's label (the operation, and for the
// matrix products the weight type and shape). The table goes to stderr when the backend is destroyed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backend/profile_table.h"
#include "hip/kernels.h"

namespace ember::gpu_backend {

class GpuProfiler {
public:
    explicit GpuProfiler(gpu::Stream stream);
    ~GpuProfiler();
    GpuProfiler(const GpuProfiler&) = delete;
    GpuProfiler& operator=(const GpuProfiler&) = delete;

    static bool wanted();

    void begin_step();  // before the step's first launch
    void after_launch(const std::string& label);
    void end_step();  // waits for the step and charges its launches
    std::string report() const;

private:
    gpu::Stream stream_;
    std::vector<gpu::Event> events_;  // events_[i + 1] follows launch i of the step
    std::vector<std::string> labels_;
    std::map<std::string, ProfileEntry> entries_;
    uint64_t steps_ = 0;
    double total_ms_ = 0;
};

}  // namespace ember::gpu_backend
