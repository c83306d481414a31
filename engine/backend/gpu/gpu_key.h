// SPDX-License-Identifier: MIT
// Launch keys: every value a recorded launch depends on, as 64-bit words (see step_recorder.h).
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "hip/kernels.h"

namespace ember::gpu_backend {

inline void key_words(std::vector<uint64_t>& k, const gpu_kernels::Rows& r) {
    k.insert(k.end(), {reinterpret_cast<uintptr_t>(r.data), static_cast<uint64_t>(r.rows),
                       static_cast<uint64_t>(r.cols), static_cast<uint64_t>(r.stride)});
}
inline void key_words(std::vector<uint64_t>& k, const gpu_kernels::Weights& w) {
    k.insert(k.end(), {w.type, reinterpret_cast<uintptr_t>(w.data), static_cast<uint64_t>(w.rows),
                       static_cast<uint64_t>(w.cols), w.row_stride});
}
inline void key_words(std::vector<uint64_t>& k, const gpu_kernels::TypedRows& r) {
    k.insert(k.end(), {r.type, reinterpret_cast<uintptr_t>(r.data), static_cast<uint64_t>(r.rows),
                       static_cast<uint64_t>(r.cols), r.row_stride});
}
inline void key_words(std::vector<uint64_t>& k, const gpu_kernels::ProductRows& p) {
    key_words(k, p.w);
    key_words(k, p.out);
    k.push_back(reinterpret_cast<uintptr_t>(p.bias));
}
template <typename T>
void key_words(std::vector<uint64_t>& k, T v) {
    if constexpr (std::is_pointer_v<T>)
        k.push_back(reinterpret_cast<uintptr_t>(v));
    else if constexpr (std::is_same_v<T, float>)
        k.push_back(std::bit_cast<uint32_t>(v));
    else if constexpr (std::is_enum_v<T>)
        k.push_back(static_cast<uint64_t>(v));
    else
        k.push_back(static_cast<uint64_t>(v));
}

template <typename... A>
std::vector<uint64_t> launch_key(const char* op, const A&... a) {
    std::vector<uint64_t> k;
    k.push_back(reinterpret_cast<uintptr_t>(op));
    (key_words(k, a), ...);
    return k;
}

}  // namespace ember::gpu_backend
