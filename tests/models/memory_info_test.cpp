// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "memory_info.h"

namespace ember::models {
namespace {

TEST(MemoryInfo, ParsesMeminfo) {
    const MemoryBudget b = parse_meminfo(
        "MemTotal:       131072000 kB\nMemFree:         1000 kB\nMemAvailable:   65536000 kB\nBuffers: 1 kB\n");
    EXPECT_EQ(b.system_total, 131072000ull * 1024);
    EXPECT_EQ(b.system_available, 65536000ull * 1024);
    EXPECT_FALSE(b.gpu_total.has_value());
}

TEST(MemoryInfo, GarbageGivesZeros) {
    const MemoryBudget b = parse_meminfo("MemTotal: lots\nMemAvailable:99999999999999999999999 kB\nMemTotalX: 5 kB");
    EXPECT_EQ(b.system_total, 0u);
    EXPECT_EQ(b.system_available, 0u);
}

TEST(MemoryInfo, ProbeReadsThisMachineAndAsksTheGpuProvider) {
    const MemoryBudget none = probe_memory();
    EXPECT_GT(none.system_total, 0u);
    EXPECT_FALSE(none.gpu_total.has_value());  // the default: unknown
    const MemoryBudget gpu = probe_memory([] { return std::optional<uint64_t>(96ull << 30); });
    EXPECT_EQ(gpu.gpu_total, std::optional<uint64_t>(96ull << 30));
}

}  // namespace
}  // namespace ember::models
