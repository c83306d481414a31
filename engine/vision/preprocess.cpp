// SPDX-License-Identifier: MIT
// Spec §4.2: antialiased bicubic resampling as PyTorch computes it (the Hugging Face processor resizes the uint8
// image with torch bicubic + antialias, then rounds back to uint8), normalisation, and patches in merge-block order.
#include <algorithm>
#include <cmath>
#include <deque>

#include "ember/error.h"
#include "ember/vision.h"

namespace ember::vision {
namespace {

// PyTorch's antialias bicubic filter (Keys, a = -0.5, as Pillow).
double cubic(double x) {
    constexpr double a = -0.5;
    x = std::abs(x);
    if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
    if (x < 2.0) return (((x - 5.0) * x + 8.0) * x - 4.0) * a;
    return 0.0;
}

// The taps of one output index along one axis: first input index and normalised weights.
struct Taps {
    std::vector<int64_t> first;
    std::vector<int64_t> count;
    std::vector<double> weights;  // max_taps per output
    int64_t max_taps = 0;
};

Taps compute_taps(int64_t in_size, int64_t out_size) {
    const double scale = static_cast<double>(in_size) / static_cast<double>(out_size);
    const double support = scale >= 1.0 ? 2.0 * scale : 2.0;
    const double invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
    Taps t;
    t.max_taps = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
    t.first.resize(static_cast<size_t>(out_size));
    t.count.resize(static_cast<size_t>(out_size));
    t.weights.assign(static_cast<size_t>(out_size * t.max_taps), 0.0);
    for (int64_t i = 0; i < out_size; ++i) {
        const double center = scale * (static_cast<double>(i) + 0.5);
        const int64_t xmin = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
        const int64_t xsize =
            std::min<int64_t>(std::min(static_cast<int64_t>(center + support + 0.5), in_size) - xmin, t.max_taps);
        double* w = &t.weights[static_cast<size_t>(i * t.max_taps)];
        double total = 0.0;
        for (int64_t j = 0; j < xsize; ++j) {
            w[j] = cubic((static_cast<double>(j + xmin) - center + 0.5) * invscale);
            total += w[j];
        }
        if (total != 0.0)
            for (int64_t j = 0; j < xsize; ++j) w[j] /= total;
        t.first[static_cast<size_t>(i)] = xmin;
        t.count[static_cast<size_t>(i)] = xsize;
    }
    return t;
}

uint8_t to_u8(double v) {
    const double r = std::nearbyint(std::clamp(v, 0.0, 255.0));  // to-nearest-even, as torch.round
    return static_cast<uint8_t>(r);
}

}  // namespace

std::vector<uint8_t> resize_bicubic_antialias(const Image& image, int64_t out_height, int64_t out_width) {
    const int64_t ih = image.height, iw = image.width;
    if (ih <= 0 || iw <= 0 || out_height <= 0 || out_width <= 0) throw Error(image.name + ": empty image");
    // Width first (into doubles), then height; an axis whose size does not change is an identity either way. The
    // width-resized rows are made as the height pass reaches them and dropped behind it (the taps' first input row
    // never decreases), so memory stays a window of rows, not the whole intermediate image.
    const Taps tx = compute_taps(iw, out_width);
    const Taps ty = compute_taps(ih, out_height);
    const size_t row_len = static_cast<size_t>(out_width * 3);
    const auto resize_row = [&](int64_t y, std::vector<double>& dst) {
        dst.assign(row_len, 0.0);
        const uint8_t* row = image.rgb.data() + y * iw * 3;
        for (int64_t x = 0; x < out_width; ++x) {
            const double* w = &tx.weights[static_cast<size_t>(x * tx.max_taps)];
            const int64_t x0 = tx.first[static_cast<size_t>(x)], n = tx.count[static_cast<size_t>(x)];
            double* acc = &dst[static_cast<size_t>(x * 3)];
            for (int64_t j = 0; j < n; ++j)
                for (int c = 0; c < 3; ++c) acc[c] += w[j] * row[(x0 + j) * 3 + c];
        }
    };
    std::deque<std::vector<double>> window;  // width-resized input rows [window_first, window_first + size)
    int64_t window_first = 0;
    std::vector<uint8_t> out(static_cast<size_t>(out_height) * row_len);
    std::vector<double> acc(row_len);
    for (int64_t y = 0; y < out_height; ++y) {
        const double* w = &ty.weights[static_cast<size_t>(y * ty.max_taps)];
        const int64_t y0 = ty.first[static_cast<size_t>(y)], n = ty.count[static_cast<size_t>(y)];
        while (!window.empty() && window_first < y0) {
            window.pop_front();
            ++window_first;
        }
        if (window.empty()) window_first = y0;
        while (window_first + static_cast<int64_t>(window.size()) < y0 + n) {
            window.emplace_back();
            resize_row(window_first + static_cast<int64_t>(window.size()) - 1, window.back());
        }
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t j = 0; j < n; ++j) {
            const std::vector<double>& src = window[static_cast<size_t>(y0 + j - window_first)];
            for (size_t k = 0; k < row_len; ++k) acc[k] += w[j] * src[k];
        }
        for (size_t k = 0; k < row_len; ++k) out[static_cast<size_t>(y) * row_len + k] = to_u8(acc[k]);
    }
    return out;
}

std::vector<float> preprocess(const Image& image, const ImageGrid& grid, int64_t patch_size,
                              std::span<const float, 3> mean, std::span<const float, 3> std) {
    const int64_t m = grid.merge;
    if (patch_size <= 0 || m <= 0 || grid.height != grid.patch_rows * patch_size ||
        grid.width != grid.patch_cols * patch_size || grid.patch_rows % m != 0 || grid.patch_cols % m != 0)
        throw Error(image.name + ": bad preprocessing grid");
    const std::vector<uint8_t> pixels = resize_bicubic_antialias(image, grid.height, grid.width);
    const int64_t p = patch_size, patch_len = 3 * 2 * p * p;
    float lut[3][256];
    for (int c = 0; c < 3; ++c)
        for (int v = 0; v < 256; ++v) lut[c][v] = (static_cast<float>(v) / 255.0f - mean[c]) / std[c];
    std::vector<float> out(static_cast<size_t>(grid.patches() * patch_len));
    const int64_t block_cols = grid.patch_cols / m;
    for (int64_t pr = 0; pr < grid.patch_rows; ++pr) {
        for (int64_t pc = 0; pc < grid.patch_cols; ++pc) {
            const int64_t br = pr / m, dy = pr % m, bc = pc / m, dx = pc % m;
            const int64_t n = m * m * (br * block_cols + bc) + m * dy + dx;
            float* patch = &out[static_cast<size_t>(n * patch_len)];
            for (int c = 0; c < 3; ++c) {
                for (int64_t y = 0; y < p; ++y) {
                    const uint8_t* src = &pixels[static_cast<size_t>(((pr * p + y) * grid.width + pc * p) * 3 + c)];
                    float* f0 = patch + (c * 2 + 0) * p * p + y * p;
                    float* f1 = patch + (c * 2 + 1) * p * p + y * p;
                    for (int64_t x = 0; x < p; ++x) f0[x] = f1[x] = lut[c][src[x * 3]];
                }
            }
        }
    }
    return out;
}

}  // namespace ember::vision
