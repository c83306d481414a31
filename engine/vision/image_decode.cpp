// SPDX-License-Identifier: MIT
// Image decoding with stb_image: the format is told by its magic bytes, the header's size checked against
// kMaxDecodedPixels before any pixel is decoded, then RGB pixels with the JPEG's EXIF orientation applied.
#include <stb/stb_image.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <string_view>

#include "ember/error.h"
#include "ember/vision.h"
#include "vision/exif_orientation.h"

namespace ember::vision {
namespace {

enum class Format { png, jpeg, bmp, gif, webp, other };

bool starts_with(std::span<const std::byte> b, std::string_view magic, size_t at = 0) {
    if (b.size() < at + magic.size()) return false;
    return std::memcmp(b.data() + at, magic.data(), magic.size()) == 0;
}

Format sniff(std::span<const std::byte> b) {
    if (starts_with(b, "\x89PNG\r\n\x1a\n")) return Format::png;
    if (starts_with(b, "\xFF\xD8\xFF")) return Format::jpeg;
    if (starts_with(b, "BM")) return Format::bmp;
    if (starts_with(b, "GIF87a") || starts_with(b, "GIF89a")) return Format::gif;
    if (starts_with(b, "RIFF") && starts_with(b, "WEBP", 8)) return Format::webp;
    return Format::other;
}

std::string reason() {
    const char* r = stbi_failure_reason();
    return r ? std::string(r) : std::string("unknown error");
}

}  // namespace

Image decode_image(std::span<const std::byte> bytes, const std::string& name) {
    const Format format = sniff(bytes);
    if (format == Format::webp) throw Error(name + ": unsupported image format (WebP)");
    if (format == Format::other) throw Error(name + ": not an image (unsupported format)");
    if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
        throw Error(name + ": image file too large");
    const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
    const int length = static_cast<int>(bytes.size());
    const auto check_size = [&](int64_t w, int64_t h) {
        if (w <= 0 || h <= 0) throw Error(name + ": empty image (0 pixels)");
        if (w * h > kMaxDecodedPixels)
            throw Error(name + ": image too large (" + std::to_string(w) + "x" + std::to_string(h) +
                        " pixels, at most " + std::to_string(kMaxDecodedPixels) + ")");
    };
    // stb refuses a PNG header above its own byte limit with a vague message: read the size from IHDR first.
    if (format == Format::png && bytes.size() >= 24 && starts_with(bytes, "IHDR", 12)) {
        const auto be32 = [&](size_t at) {
            return int64_t{static_cast<uint8_t>(bytes[at])} << 24 | int64_t{static_cast<uint8_t>(bytes[at + 1])} << 16 |
                   int64_t{static_cast<uint8_t>(bytes[at + 2])} << 8 | int64_t{static_cast<uint8_t>(bytes[at + 3])};
        };
        check_size(be32(16), be32(20));
    }
    int w = 0, h = 0, channels = 0;
    if (!stbi_info_from_memory(data, length, &w, &h, &channels))
        throw Error(name + ": corrupt or truncated image (" + reason() + ")");
    check_size(w, h);
    int dw = 0, dh = 0;
    std::unique_ptr<stbi_uc, void (*)(void*)> pixels(stbi_load_from_memory(data, length, &dw, &dh, &channels, 3),
                                                     stbi_image_free);
    if (!pixels) throw Error(name + ": corrupt or truncated image (" + reason() + ")");
    if (dw != w || dh != h) throw Error(name + ": corrupt image (its size changed while decoding)");
    Image image;
    image.name = name;
    image.width = w;
    image.height = h;
    image.rgb.assign(pixels.get(), pixels.get() + static_cast<size_t>(w) * h * 3);
    if (format == Format::jpeg) apply_orientation(jpeg_exif_orientation(bytes), image.width, image.height, image.rgb);
    return image;
}

Image load_image(const std::filesystem::path& path) {
    const std::string name = path.string();
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(name + ": cannot open the file");
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size < 0) throw Error(name + ": cannot read the file");
    // Compressed data beyond this would decode to more than kMaxDecodedPixels anyway.
    if (size > (int64_t{1} << 30)) throw Error(name + ": image file too large");
    in.seekg(0);
    std::vector<std::byte> bytes(static_cast<size_t>(size));
    if (!in.read(reinterpret_cast<char*>(bytes.data()), size)) throw Error(name + ": cannot read the file");
    return decode_image(bytes, name);
}

}  // namespace ember::vision
