// SPDX-License-Identifier: MIT
// The GPU profilers' table (EMBER_VULKAN_PROFILE, EMBER_GPU_PROFILE): most time first, shares of the total, mean
// microseconds per call.
#include <gtest/gtest.h>

#include "backend/profile_table.h"

TEST(ProfileTable, RowsByTimeWithSharesAndMeans) {
    const std::map<std::string, ember::ProfileEntry> entries = {
        {"rms_norm", {4, 1.0}}, {"matmul q4_0 64x64", {2, 6.0}}, {"idle", {0, 0.0}}};
    const std::string table = ember::profile_table(entries, 8.0, "launch");
    EXPECT_EQ(table,
              "  share     total ms     calls   mean us  launch\n"
              "   75.0%        6.000         2   3000.00  matmul q4_0 64x64\n"
              "   12.5%        1.000         4    250.00  rms_norm\n"
              "    0.0%        0.000         0      0.00  idle\n");
    EXPECT_EQ(ember::profile_table({}, 0.0, "pipeline"), "  share     total ms     calls   mean us  pipeline\n");
}
