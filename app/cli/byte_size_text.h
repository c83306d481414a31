// SPDX-License-Identifier: MIT
// A byte count as the command-line tools print it: "512 B", "3.25 GiB".
#pragma once

#include <cstdint>
#include <string>

namespace ember::cli {

// Binary units (KiB, MiB, GiB, TiB) with two decimals; whole bytes below 1 KiB.
std::string human_bytes(uint64_t bytes);

}  // namespace ember::cli
