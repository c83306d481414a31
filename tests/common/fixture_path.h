// SPDX-License-Identifier: MIT
// Where the generated fixtures are: $EMBER_FIXTURES, else the build's fixture folder compiled in by
// ember_add_gtest, joined with a relative path.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace ember::test {

inline std::filesystem::path fixture_path(const std::filesystem::path& relative) {
    const char* root = std::getenv("EMBER_FIXTURES");
#ifdef EMBER_TEST_FIXTURE_DIR
    if (!root) root = EMBER_TEST_FIXTURE_DIR;
#endif
    if (!root) throw std::runtime_error("EMBER_FIXTURES is not set: run the tests through ctest");
    return std::filesystem::path(root) / relative;
}

}  // namespace ember::test
