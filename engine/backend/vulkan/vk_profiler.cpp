// SPDX-License-Identifier: MIT
// EMBER_VULKAN_PROFILE: timestamp queries around every dispatch, summed per shader.
#include "backend/vulkan/vk_profiler.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backend/vulkan/vk_context.h"

namespace ember::vulkan {

namespace {

constexpr uint32_t kQueries = 32768;

}  // namespace

bool Profiler::wanted(const Context& ctx) {
    const char* env = std::getenv("EMBER_VULKAN_PROFILE");
    if (!env || !*env || std::strcmp(env, "0") == 0 || std::strcmp(env, "host") == 0) return false;
    return ctx.timestamp_bits() > 0;
}

Profiler::Profiler(const Context& ctx) : ctx_(ctx) {
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = kQueries;
    check(ctx.api().vkCreateQueryPool(ctx.device(), &qi, nullptr, &pool_), "vkCreateQueryPool");
    capacity_ = kQueries;
    period_ns_ = ctx.limits().timestampPeriod;
    const uint32_t bits = ctx.timestamp_bits();
    valid_mask_ = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

Profiler::~Profiler() { ctx_.api().vkDestroyQueryPool(ctx_.device(), pool_, nullptr); }

void Profiler::begin(VkCommandBuffer cmd) {
    ctx_.api().vkCmdResetQueryPool(cmd, pool_, 0, capacity_);
    ctx_.api().vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, pool_, 0);
    used_ = 1;
    names_.clear();
}

void Profiler::after_dispatch(VkCommandBuffer cmd, const std::string& pipeline) {
    if (used_ >= capacity_) {
        ++dropped_;
        return;
    }
    ctx_.api().vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, pool_, used_++);
    names_.push_back(pipeline);
}

void Profiler::collect() {
    ++submissions_;
    if (used_ < 2) return;
    std::vector<uint64_t> stamps(used_);
    check(ctx_.api().vkGetQueryPoolResults(ctx_.device(), pool_, 0, used_, stamps.size() * sizeof(uint64_t),
                                           stamps.data(), sizeof(uint64_t),
                                           VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
    for (uint32_t i = 1; i < used_; ++i) {
        const uint64_t delta = (stamps[i] - stamps[i - 1]) & valid_mask_;
        ProfileEntry& e = entries_[names_[i - 1]];
        ++e.calls;
        e.ms += static_cast<double>(delta) * period_ns_ / 1e6;
    }
    gpu_ns_ += static_cast<double>((stamps[used_ - 1] - stamps[0]) & valid_mask_) * period_ns_;
    used_ = 0;
}

std::string Profiler::report() const {
    uint64_t dispatches = 0;
    for (const auto& [name, e] : entries_) dispatches += e.calls;
    char line[256];
    std::snprintf(line, sizeof line,
                  "vulkan profile: %.3f ms of GPU time in %llu submissions, %llu dispatches, %llu barriers%s\n",
                  gpu_ns_ / 1e6, static_cast<unsigned long long>(submissions_),
                  static_cast<unsigned long long>(dispatches), static_cast<unsigned long long>(barriers_),
                  dropped_ ? " (some dispatches not timed: too many in one submission)" : "");
    return line + profile_table(entries_, gpu_ns_ / 1e6, "pipeline");
}

}  // namespace ember::vulkan
