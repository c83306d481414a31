// SPDX-License-Identifier: MIT
// The bad-input table: each bad image or projector gives one line naming the file, in bounded time.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb/stb_image_write.h>

#include "ember/error.h"
#include "ember/vision.h"
#include "vision/load_projector.h"
#include "vision/vision_test_support.h"

namespace ember::vision {
namespace {

struct BadImage {
    const char* file;
    const char* expect;  // part of the message
};

TEST(VisionBadInput, Images) {
    const BadImage cases[] = {
        {"truncated.png", "corrupt or truncated"},
        {"corrupt.jpg", "corrupt or truncated"},
        {"zero.png", "empty image"},
        {"bomb.png", "image too large"},
        {"huge_20000.png", "image too large"},
        {"text.png", "not an image (unsupported format)"},
        {"image.webp", "unsupported image format"},
    };
    for (const BadImage& c : cases) {
        SCOPED_TRACE(c.file);
        const auto path = test::vision_fixture(c.file);
        const auto t0 = std::chrono::steady_clock::now();
        try {
            load_image(path);
            ADD_FAILURE() << "accepted";
        } catch (const Error& e) {
            const std::string m = e.what();
            EXPECT_TRUE(m.starts_with(path.string() + ": ")) << m;
            EXPECT_NE(m.find(c.expect), std::string::npos) << m;
            EXPECT_EQ(m.find('\n'), std::string::npos) << m;
        }
        EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
    }
}

TEST(VisionBadInput, OnePixelIsUpscaledToMinPixels) {
    const Image image = load_image(test::vision_fixture("one.png"));
    EXPECT_EQ(image.width, 1);
    EXPECT_EQ(image.rgb.size(), 3u);
    const ImageGrid g = smart_resize(1, 1, 16, 2, {});
    EXPECT_EQ(g.height * g.width, 65536);
    auto backend = make_cpu_backend();
    const auto path = test::vision_fixture("mmproj-F32.gguf");
    const gguf::File gf = gguf::File::open(path);
    const auto projector = load_projector(gf, path, *backend);
    const ImageGrid pg = projector->grid(image);
    EXPECT_GE(pg.height * pg.width, 8192);
}

TEST(VisionBadInput, Projectors) {
    const BadImage cases[] = {
        {"mmproj-missing.gguf", "missing tensor 'v.blk.1.ffn_up.weight'"},
        {"mmproj-shape.gguf", "tensor 'v.blk.0.attn_qkv.weight' has shape [64, 191], expected [64, 192]"},
        {"mmproj-type.gguf", "projector type 'ldp' is not supported"},
        {"image_50x70.png", ""},
    };
    auto backend = make_cpu_backend();
    for (const BadImage& c : cases) {
        SCOPED_TRACE(c.file);
        const auto path = test::vision_fixture(c.file);
        try {
            const gguf::File gf = gguf::File::open(path);
            load_projector(gf, path, *backend);
            ADD_FAILURE() << "accepted";
        } catch (const Error& e) {
            const std::string m = e.what();
            EXPECT_TRUE(m.starts_with(path.string())) << m;
            EXPECT_NE(m.find(c.expect), std::string::npos) << m;
            EXPECT_EQ(m.find('\n'), std::string::npos) << m;
        }
    }
}

// A JPEG written by stb_image_write with an APP1 Exif segment (big-endian TIFF, Orientation = `orientation`)
// inserted after SOI.
std::vector<std::byte> jpeg_with_orientation(int width, int height, int orientation) {
    std::vector<uint8_t> rgb(static_cast<size_t>(width * height * 3));
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            uint8_t* p = &rgb[static_cast<size_t>((y * width + x) * 3)];
            p[0] = x < width / 2 ? 250 : 5;   // left half red
            p[1] = y < height / 2 ? 250 : 5;  // top half green
            p[2] = 5;
        }
    std::vector<uint8_t> jpeg;
    stbi_write_jpg_to_func(
        [](void* ctx, void* data, int size) {
            auto* out = static_cast<std::vector<uint8_t>*>(ctx);
            out->insert(out->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
        },
        &jpeg, width, height, 3, rgb.data(), 95);
    const uint8_t tiff[] = {'M',  'M',  0, 42, 0, 0, 0, 8, 0, 1,
                            0x01, 0x12, 0, 3,  0, 0, 0, 1, 0, static_cast<uint8_t>(orientation),
                            0,    0,    0, 0,  0, 0};
    std::vector<uint8_t> app1 = {0xFF, 0xE1, 0, 0, 'E', 'x', 'i', 'f', 0, 0};
    app1.insert(app1.end(), std::begin(tiff), std::end(tiff));
    app1[2] = static_cast<uint8_t>((app1.size() - 2) >> 8);
    app1[3] = static_cast<uint8_t>(app1.size() - 2);
    jpeg.insert(jpeg.begin() + 2, app1.begin(), app1.end());
    std::vector<std::byte> out(jpeg.size());
    std::memcpy(out.data(), jpeg.data(), jpeg.size());
    return out;
}

TEST(VisionBadInput, JpegExifOrientation) {
    const Image plain = decode_image(jpeg_with_orientation(32, 16, 1), "plain.jpg");
    EXPECT_EQ(plain.width, 32);
    EXPECT_EQ(plain.height, 16);
    EXPECT_GT(plain.rgb[0], 200);  // top-left red
    // Orientation 6: shown rotated 90 degrees clockwise, so the stored left (red) half ends on top.
    const Image turned = decode_image(jpeg_with_orientation(32, 16, 6), "turned.jpg");
    EXPECT_EQ(turned.width, 16);
    EXPECT_EQ(turned.height, 32);
    const auto at = [&](int x, int y, int c) { return turned.rgb[static_cast<size_t>((y * 16 + x) * 3 + c)]; };
    EXPECT_GT(at(8, 4, 0), 200);   // top: red
    EXPECT_LT(at(8, 28, 0), 50);   // bottom: not red
    EXPECT_GT(at(12, 4, 1), 200);  // stored top (green) is now on the right
    EXPECT_LT(at(3, 4, 1), 50);
    const Image mirrored = decode_image(jpeg_with_orientation(32, 16, 2), "mirrored.jpg");
    EXPECT_EQ(mirrored.width, 32);
    EXPECT_LT(mirrored.rgb[0], 50);  // top-left no longer red
}

}  // namespace
}  // namespace ember::vision
