// SPDX-License-Identifier: MIT
// GPU time per shader, for finding where a forward pass spends its time: with EMBER_VULKAN_PROFILE=1 in the
// environment the stream writes a timestamp after every dispatch and this class charges the time since the
// previous timestamp to the dispatch's pipeline. The table goes to stderr when the backend is destroyed.
// Timestamps serialize nothing, so overlapping dispatches share time unevenly; the totals are still exact.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backend/profile_table.h"
#include "backend/vulkan/vk_api.h"

namespace ember::vulkan {

class Context;

class Profiler {
public:
    explicit Profiler(const Context& ctx);
    ~Profiler();
    Profiler(const Profiler&) = delete;
    Profiler& operator=(const Profiler&) = delete;

    // True when EMBER_VULKAN_PROFILE asks for a profile and the queue can write timestamps.
    static bool wanted(const Context& ctx);

    void begin(VkCommandBuffer cmd);  // a new command buffer
    void after_dispatch(VkCommandBuffer cmd, const std::string& pipeline);
    void note_barrier() { ++barriers_; }
    void collect();  // after the command buffer completed
    std::string report() const;

private:
    const Context& ctx_;
    VkQueryPool pool_ = VK_NULL_HANDLE;
    uint32_t capacity_ = 0;
    uint32_t used_ = 0;
    std::vector<std::string> names_;  // the pipeline of query i + 1
    std::map<std::string, ProfileEntry> entries_;
    double period_ns_ = 1.0;
    uint64_t valid_mask_ = ~uint64_t{0};
    uint64_t submissions_ = 0, barriers_ = 0, dropped_ = 0;
    double gpu_ns_ = 0;
};

}  // namespace ember::vulkan
