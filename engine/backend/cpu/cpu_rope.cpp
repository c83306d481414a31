// SPDX-License-Identifier: MIT
// Rotary position embedding. For pair i of a head (i < n_rot / 2) the angle is
// pos * freq_scale * freq_base^(-2i / n_rot); "normal" rotates elements (2i, 2i+1), "neox" rotates (i, i + n_rot/2).
// Elements past n_rot are left as they are (partial rotary). multi_interleaved and vision pair like neox and take
// each pair's position and frequency as rope_angle.h says (see RopeParams).
#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/host_buffer.h"
#include "backend/rope_angle.h"

namespace ember::cpu_backend {

void CpuBackend::do_rope(const Tensor& x, int head_dim, std::span<const int32_t> positions, const RopeParams& p,
                         const Tensor* freq_factors) {
    const int64_t n_heads = x.cols / head_dim;
    const int half = p.n_rot / 2;
    const float* factors = nullptr;
    if (freq_factors) {
        factors = host_f32(*freq_factors);
    }
    for_rows(x.rows, x.cols * 4, [&](int64_t begin, int64_t end) {
        float cos_table[512];
        float sin_table[512];
        for (int64_t r = begin; r < end; ++r) {
            for (int i = 0; i < half && i < 512; ++i) {
                const double theta =
                    rope_angle::theta(p, i, positions, static_cast<size_t>(x.rows), static_cast<size_t>(r), factors);
                cos_table[i] = static_cast<float>(std::cos(theta));
                sin_table[i] = static_cast<float>(std::sin(theta));
            }
            float* row = reinterpret_cast<float*>(host_data(x) + static_cast<size_t>(r) * x.row_stride);
            for (int64_t h = 0; h < n_heads; ++h) {
                float* v = row + h * head_dim;
                for (int i = 0; i < half; ++i) {
                    const int a = rope_angle::pair_first(p.mode, i);
                    const int b = rope_angle::pair_second(p.mode, i, half);
                    const float x0 = v[a];
                    const float x1 = v[b];
                    v[a] = x0 * cos_table[i] - x1 * sin_table[i];
                    v[b] = x0 * sin_table[i] + x1 * cos_table[i];
                }
            }
        }
    });
}

}  // namespace ember::cpu_backend
