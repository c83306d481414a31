// SPDX-License-Identifier: MIT
// Shared helpers of the vision tests: fixture files as bytes or floats, and the fixtures' JSON.
#pragma once

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/fixture_path.h"

namespace ember::test {

inline std::filesystem::path vision_fixture(const std::string& name) {
    return fixture_path("vision") / name;
}

template <typename T>
std::vector<T> read_raw(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<T> out(bytes.size() / sizeof(T));
    std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
}

inline nlohmann::json vision_meta() {
    std::ifstream in(vision_fixture("vision.json"));
    return nlohmann::json::parse(in);
}

}  // namespace ember::test
