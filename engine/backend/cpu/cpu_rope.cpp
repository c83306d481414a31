// SPDX-License-Identifier: MIT
// Rotary position embedding. For pair i of a head (i < n_rot / 2) the angle is
// pos * freq_scale * freq_base^(-2i / n_rot); "normal" rotates elements (2i, 2i+1), "neox" rotates (i, i + n_rot/2).
// Elements past n_rot are left as they are (partial rotary). multi_interleaved pairs like neox and takes each
// pair's position from the t, h or w axis (see RopeParams).
#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_checks.h"
#include "backend/cpu/host_buffer.h"

namespace ember::cpu_backend {

void CpuBackend::rope(const Tensor& x, int head_dim, std::span<const int32_t> positions, const RopeParams& p,
                      const Tensor* freq_factors) {
    require_f32(x, "rope input");
    const bool multi = p.mode == RopeMode::multi_interleaved;
    require(static_cast<int64_t>(positions.size()) == x.rows * (multi ? 3 : 1),
            multi ? "rope: three positions (t, h, w) per row" : "rope: one position per row");
    require(head_dim > 0 && x.cols % head_dim == 0, "rope: row length is not a multiple of the head size");
    require(p.n_rot > 0 && p.n_rot <= head_dim && p.n_rot % 2 == 0 && p.n_rot <= 1024,
            "rope: bad rotary dimension count");
    const int64_t n_heads = x.cols / head_dim;
    const int half = p.n_rot / 2;
    const float* factors = nullptr;
    if (freq_factors) {
        require_f32(*freq_factors, "rope frequency factors");
        require(freq_factors->rows * freq_factors->cols == half, "rope: need n_rot/2 frequency factors");
        factors = host_f32(*freq_factors);
    }
    for_rows(x.rows, x.cols * 4, [&](int64_t begin, int64_t end) {
        float cos_table[512];
        float sin_table[512];
        for (int64_t r = begin; r < end; ++r) {
            for (int i = 0; i < half && i < 512; ++i) {
                int axis = 0;
                if (multi) axis = (i % 3 == 1 && i < 3 * p.sections[1]) ? 1 : (i % 3 == 2 && i < 3 * p.sections[2]) ? 2 : 0;
                const double pos =
                    static_cast<double>(positions[static_cast<size_t>(axis * x.rows + r)]) * p.freq_scale;
                double theta = pos * std::pow(static_cast<double>(p.freq_base), -2.0 * i / p.n_rot);
                if (factors) theta /= factors[i];
                cos_table[i] = static_cast<float>(std::cos(theta));
                sin_table[i] = static_cast<float>(std::sin(theta));
            }
            float* row = reinterpret_cast<float*>(host_data(x) + static_cast<size_t>(r) * x.row_stride);
            for (int64_t h = 0; h < n_heads; ++h) {
                float* v = row + h * head_dim;
                for (int i = 0; i < half; ++i) {
                    const int a = p.mode == RopeMode::normal ? 2 * i : i;
                    const int b = p.mode == RopeMode::normal ? 2 * i + 1 : i + half;
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
