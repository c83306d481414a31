// SPDX-License-Identifier: MIT
// Helpers shared by the chat tests: rendering with the golden setup's pinned clock, shared data paths.
#pragma once

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ember/chat.h"

namespace ember::test {

// render_golden.py pins strftime_now to 2025-01-15 12:00.
inline std::chrono::local_seconds golden_now() {
    using namespace std::chrono;
    return local_days{year{2025} / January / 15} + hours{12};
}

inline std::string render(const std::string& source,
                          const nlohmann::ordered_json& variables = nlohmann::ordered_json::object(),
                          const chat::Limits& limits = {}) {
    return chat::Template::parse(source, "t").render(variables, limits, golden_now());
}

// The error message of parsing and rendering, or "(no error)".
inline std::string render_error(const std::string& source,
                                const nlohmann::ordered_json& variables = nlohmann::ordered_json::object(),
                                const chat::Limits& limits = {}) {
    try {
        render(source, variables, limits);
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

inline std::filesystem::path shared_templates() {
    return std::filesystem::path(EMBER_SHARED_DATA) / "templates";
}

}  // namespace ember::test
