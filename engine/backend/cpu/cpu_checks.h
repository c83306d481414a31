// SPDX-License-Identifier: MIT
// Argument checks of the CPU backend's operations. A failure is a bug in the caller (model code), reported as an
// ember::Error so that it surfaces as one line instead of corrupting memory.
#pragma once

#include <string>

#include "ember/backend.h"

namespace ember::cpu_backend {

inline void require(bool ok, const std::string& what) {
    if (!ok) throw Error("cpu backend: " + what);
}

inline void require_f32(const Tensor& t, const char* what) {
    require(t.type == gguf::TensorType::F32, std::string(what) + " must be f32");
}

inline void require_same_shape(const Tensor& a, const Tensor& b, const char* what) {
    require(a.rows == b.rows && a.cols == b.cols,
            std::string(what) + ": shapes " + std::to_string(a.rows) + "x" + std::to_string(a.cols) + " and " +
                std::to_string(b.rows) + "x" + std::to_string(b.cols) + " differ");
}

}  // namespace ember::cpu_backend
