// SPDX-License-Identifier: MIT
// smart_resize against the spec's test vectors and preprocess against the numpy reference on nine image sizes.
#include <gtest/gtest.h>

#include <cmath>

#include "ember/vision.h"
#include "vision/vision_test_support.h"

namespace ember::vision {
namespace {

TEST(SmartResize, SpecVectors) {
    struct Case {
        int64_t h, w, min, max, out_h, out_w;
    };
    const Case cases[] = {
        {750, 1000, 65536, 16777216, 736, 992},    {240, 400, 65536, 16777216, 256, 384},
        {336, 592, 65536, 16777216, 320, 576},     {100, 100, 65536, 16777216, 256, 256},
        {6000, 8000, 65536, 16777216, 3520, 4704}, {6000, 8000, 8 * 1024, 4096 * 1024, 1760, 2336},
    };
    for (const Case& c : cases) {
        const ImageGrid g = smart_resize(c.h, c.w, 16, 2, {c.min, c.max});
        EXPECT_EQ(g.height, c.out_h) << c.h << "x" << c.w;
        EXPECT_EQ(g.width, c.out_w) << c.h << "x" << c.w;
        EXPECT_EQ(g.patch_rows * 16, g.height);
        EXPECT_EQ(g.patch_rows % 2, 0);
    }
    EXPECT_EQ(smart_resize(750, 1000, 16, 2, {}).tokens(), 713);
    EXPECT_EQ(smart_resize(240, 400, 16, 2, {}).tokens(), 96);
    EXPECT_EQ(smart_resize(6000, 8000, 16, 2, {}).tokens(), 16170);
    EXPECT_TRUE(downscaled_by_limits(6000, 8000, 16, 2, {}));
    EXPECT_FALSE(downscaled_by_limits(750, 1000, 16, 2, {}));
}

TEST(Preprocess, MatchesReferenceOnNineSizes) {
    const nlohmann::json meta = test::vision_meta();
    const float half[3] = {0.5f, 0.5f, 0.5f};
    for (const auto& c : meta["preprocess"]) {
        const std::string name = c["name"];
        SCOPED_TRACE(name);
        Image image;
        image.name = name;
        image.height = c["h"];
        image.width = c["w"];
        image.rgb = test::read_raw<uint8_t>(test::vision_fixture("pre_" + name + ".rgb"));
        ASSERT_EQ(image.rgb.size(), static_cast<size_t>(image.height * image.width * 3));
        const PixelLimits limits{c["min"], c["max"]};
        const ImageGrid g = smart_resize(image.height, image.width, 16, 2, limits);
        EXPECT_EQ(g.height, c["out_h"].get<int64_t>());
        EXPECT_EQ(g.width, c["out_w"].get<int64_t>());
        EXPECT_EQ(downscaled_by_limits(image.height, image.width, 16, 2, limits), c["downscaled"].get<bool>());
        const std::vector<float> got =
            preprocess(image, g, 16, std::span<const float, 3>(half), std::span<const float, 3>(half));
        const std::vector<float> want = test::read_raw<float>(test::vision_fixture("pre_" + name + ".f32"));
        ASSERT_EQ(got.size(), want.size());
        // Both round the resampled value to 8 bits; an exact .5 tie computed in another order may round apart.
        size_t off_by_one = 0;
        for (size_t i = 0; i < got.size(); ++i) {
            const float d = std::abs(got[i] - want[i]);
            if (d > 1e-6f) {
                ASSERT_LE(d, 2.0f / 255.0f + 1e-6f) << "value " << i;
                ++off_by_one;
            }
        }
        EXPECT_LE(off_by_one, got.size() / 10000) << "values a level apart";
        std::printf("  %-20s %4lldx%-5lld -> %4lldx%-5lld grid %lldx%lld, %lld tokens\n", name.c_str(),
                    static_cast<long long>(image.height), static_cast<long long>(image.width),
                    static_cast<long long>(g.height), static_cast<long long>(g.width),
                    static_cast<long long>(g.patch_rows), static_cast<long long>(g.patch_cols),
                    static_cast<long long>(g.tokens()));
    }
}

TEST(Preprocess, PatchOrderIsMergeBlocks) {
    // A 64x64 image whose pixel value encodes its 16x16 patch: patch n must come from grid (row, col) of §4.2.
    Image image;
    image.name = "order";
    image.width = image.height = 64;
    image.rgb.resize(64 * 64 * 3);
    for (int y = 0; y < 64; ++y)
        for (int x = 0; x < 64; ++x)
            for (int c = 0; c < 3; ++c) image.rgb[(y * 64 + x) * 3 + c] = static_cast<uint8_t>((y / 16) * 4 + x / 16);
    const ImageGrid g = smart_resize(64, 64, 16, 2, {1024, 1 << 20});
    ASSERT_EQ(g.patch_rows, 4);
    const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    const std::vector<float> p =
        preprocess(image, g, 16, std::span<const float, 3>(zero), std::span<const float, 3>(one));
    for (int n = 0; n < 16; ++n) {
        const int br = n / 8, bc = (n / 4) % 2, dy = (n % 4) / 2, dx = n % 2;
        const int row = br * 2 + dy, col = bc * 2 + dx;
        EXPECT_FLOAT_EQ(p[static_cast<size_t>(n) * 1536] * 255.0f, static_cast<float>(row * 4 + col)) << n;
    }
}

}  // namespace
}  // namespace ember::vision
