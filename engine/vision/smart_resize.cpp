// SPDX-License-Identifier: MIT
// smart_resize (spec §4.1): Python's round-half-to-even in step 1, the pixel limits in double precision.
#include <cfenv>
#include <cmath>

#include "ember/error.h"
#include "ember/vision.h"

namespace ember::vision {
namespace {

struct Resized {
    int64_t h = 0, w = 0;
    bool downscaled = false;
};

double round_half_even(double x) {
    // nearbyint rounds in the current mode, which is to-nearest-even unless someone changed it.
    const int mode = std::fegetround();
    if (mode != FE_TONEAREST) std::fesetround(FE_TONEAREST);
    const double r = std::nearbyint(x);
    if (mode != FE_TONEAREST) std::fesetround(mode);
    return r;
}

Resized resize_to_limits(int64_t height, int64_t width, int64_t factor, const PixelLimits& limits) {
    if (height <= 0 || width <= 0) throw Error("smart_resize: empty image");
    const double h = static_cast<double>(height), w = static_cast<double>(width), f = static_cast<double>(factor);
    const auto at_least_factor = [&](double v) { return std::max(factor, static_cast<int64_t>(v)); };
    Resized r;
    r.h = at_least_factor(round_half_even(h / f) * f);
    r.w = at_least_factor(round_half_even(w / f) * f);
    if (static_cast<double>(r.h) * static_cast<double>(r.w) > static_cast<double>(limits.max_pixels)) {
        const double beta = std::sqrt(h * w / static_cast<double>(limits.max_pixels));
        r.h = at_least_factor(std::floor(h / beta / f) * f);
        r.w = at_least_factor(std::floor(w / beta / f) * f);
        r.downscaled = true;
    } else if (static_cast<double>(r.h) * static_cast<double>(r.w) < static_cast<double>(limits.min_pixels)) {
        const double beta = std::sqrt(static_cast<double>(limits.min_pixels) / (h * w));
        r.h = static_cast<int64_t>(std::ceil(h * beta / f) * f);
        r.w = static_cast<int64_t>(std::ceil(w * beta / f) * f);
    }
    return r;
}

}  // namespace

ImageGrid smart_resize(int64_t height, int64_t width, int64_t patch_size, int64_t merge, const PixelLimits& limits) {
    if (patch_size <= 0 || merge <= 0) throw Error("smart_resize: bad patch size or merge");
    const Resized r = resize_to_limits(height, width, patch_size * merge, limits);
    ImageGrid grid;
    grid.height = r.h;
    grid.width = r.w;
    grid.patch_rows = r.h / patch_size;
    grid.patch_cols = r.w / patch_size;
    grid.merge = merge;
    return grid;
}

bool downscaled_by_limits(int64_t height, int64_t width, int64_t patch_size, int64_t merge, const PixelLimits& limits) {
    return resize_to_limits(height, width, patch_size * merge, limits).downscaled;
}

}  // namespace ember::vision
