// SPDX-License-Identifier: MIT
#include "memory_info.h"

#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

namespace ember::models {

namespace {

// "MemTotal:       131072000 kB" -> bytes, or nullopt when the line is another field.
std::optional<uint64_t> field_bytes(std::string_view line, std::string_view name) {
    if (!line.starts_with(name) || line.size() <= name.size() || line[name.size()] != ':') return std::nullopt;
    std::string_view rest = line.substr(name.size() + 1);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (ec != std::errc()) return std::nullopt;
    const std::string_view unit(end, rest.data() + rest.size() - end);
    const uint64_t scale = unit.find("kB") != std::string_view::npos ? 1024 : 1;
    if (value > UINT64_MAX / scale) return std::nullopt;
    return value * scale;
}

}  // namespace

MemoryBudget parse_meminfo(std::string_view text) {
    MemoryBudget budget;
    while (!text.empty()) {
        const size_t eol = text.find('\n');
        const std::string_view line = text.substr(0, eol);
        if (auto v = field_bytes(line, "MemTotal")) budget.system_total = *v;
        if (auto v = field_bytes(line, "MemAvailable")) budget.system_available = *v;
        if (eol == std::string_view::npos) break;
        text.remove_prefix(eol + 1);
    }
    return budget;
}

MemoryBudget probe_memory(const GpuMemoryProvider& gpu) {
    std::ifstream in("/proc/meminfo");
    std::ostringstream text;
    text << in.rdbuf();
    MemoryBudget budget = parse_meminfo(text.str());
    if (gpu) budget.gpu_total = gpu();
    return budget;
}

}  // namespace ember::models
