// SPDX-License-Identifier: MIT
// Lets GoogleTest print a TensorType parameter by name ("q4_0_rocmfp4") in test names and failures.
#pragma once

#include <ostream>

#include "ember/gguf.h"

namespace ember::gguf {

inline void PrintTo(TensorType type, std::ostream* os) {
    const TypeTraits* t = find_type(static_cast<uint32_t>(type));
    *os << (t ? std::string(t->name) : "type " + std::to_string(static_cast<uint32_t>(type)));
}

}  // namespace ember::gguf
