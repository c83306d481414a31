// SPDX-License-Identifier: MIT
// Formats the per-label table that both GPU profilers print.
#include "backend/profile_table.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

namespace ember {

std::string profile_table(const std::map<std::string, ProfileEntry>& entries, double total_ms, const char* what) {
    std::vector<std::pair<std::string, ProfileEntry>> rows(entries.begin(), entries.end());
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
    std::string out = std::string("  share     total ms     calls   mean us  ") + what + "\n";
    char line[320];
    for (const auto& [name, e] : rows) {
        std::snprintf(line, sizeof line, "  %5.1f%% %12.3f %9llu %9.2f  %s\n",
                      total_ms > 0 ? 100.0 * e.ms / total_ms : 0.0, e.ms, static_cast<unsigned long long>(e.calls),
                      e.calls ? 1e3 * e.ms / static_cast<double>(e.calls) : 0.0, name.c_str());
        out += line;
    }
    return out;
}

}  // namespace ember
