// SPDX-License-Identifier: MIT
// The table of a GPU profile (EMBER_VULKAN_PROFILE, EMBER_GPU_PROFILE): GPU time per label, most first.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace ember {

struct ProfileEntry {
    uint64_t calls = 0;
    double ms = 0;
};

// "  share     total ms     calls   mean us  <what>" and a row per label; shares are of total_ms.
std::string profile_table(const std::map<std::string, ProfileEntry>& entries, double total_ms, const char* what);

}  // namespace ember
