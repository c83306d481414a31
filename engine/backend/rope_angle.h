// SPDX-License-Identifier: MIT
// The rotation angle of each RoPE pair for every RopeMode (backend/backend.h): the CPU and Vulkan backends compute
// their angles here; the HIP/CUDA kernel (kernels/hip/rows.cu) mirrors it on the device.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "backend/backend.h"

namespace ember::rope_angle {

// Positions per row: 3 (t, h, w) for multi_interleaved, 2 (row, col) for vision, else 1.
inline size_t positions_per_row(RopeMode mode) {
    return mode == RopeMode::multi_interleaved ? 3 : mode == RopeMode::vision ? 2 : 1;
}

// Where pair i of n_rot / 2 takes its position from and how fast it turns: theta = pos * base^(-exponent).
struct PairSource {
    int axis = 0;  // index into the row's positions (axis-major: positions[axis * rows + row])
    double exponent = 0.0;
};

inline PairSource pair_source(const RopeParams& p, int i) {
    switch (p.mode) {
        case RopeMode::multi_interleaved: {
            const int axis = (i % 3 == 1 && i < 3 * p.sections[1]) ? 1 : (i % 3 == 2 && i < 3 * p.sections[2]) ? 2 : 0;
            return {axis, 2.0 * i / p.n_rot};
        }
        case RopeMode::vision: {
            const int quarter = p.n_rot / 4;  // pairs [0, q) turn by the row, [q, 2q) by the column
            return i < quarter ? PairSource{0, static_cast<double>(i) / quarter}
                               : PairSource{1, static_cast<double>(i - quarter) / quarter};
        }
        default:
            return {0, 2.0 * i / p.n_rot};
    }
}

// The angle of pair i of row `row` (of `rows`), in double: float sin/cos of large angles are far too coarse.
inline double theta(const RopeParams& p, int i, std::span<const int32_t> positions, size_t rows, size_t row,
                    const float* freq_factors) {
    const PairSource s = pair_source(p, i);
    const double pos = static_cast<double>(positions[static_cast<size_t>(s.axis) * rows + row]) * p.freq_scale;
    double t = pos * std::pow(static_cast<double>(p.freq_base), -s.exponent);
    if (freq_factors) t /= freq_factors[i];
    return t;
}

// The rotated pair (a, b) of pair i: NeoX-style (i, i + n_rot/2) in every mode but normal's (2i, 2i + 1).
inline int pair_first(RopeMode mode, int i) {
    return mode == RopeMode::normal ? 2 * i : i;
}
inline int pair_second(RopeMode mode, int i, int half) {
    return mode == RopeMode::normal ? 2 * i + 1 : i + half;
}

// n_rot's constraint beyond evenness: vision splits the pairs into two equal halves.
inline bool valid_n_rot(const RopeParams& p, int head_dim) {
    return p.n_rot > 0 && p.n_rot <= head_dim && p.n_rot % 2 == 0 && p.n_rot <= 1024 &&
           (p.mode != RopeMode::vision || p.n_rot % 4 == 0);
}

}  // namespace ember::rope_angle
