// SPDX-License-Identifier: MIT
// EXIF orientation: a bounded walk over the JPEG's marker segments to APP1 "Exif\0\0", then IFD0 of its TIFF
// header; every offset is checked against the segment before it is read.
#include "vision/exif_orientation.h"

#include <utility>

namespace ember::vision {
namespace {

uint8_t byte_at(std::span<const std::byte> s, size_t i) {
    return static_cast<uint8_t>(s[i]);
}

struct Tiff {
    std::span<const std::byte> data;
    bool little = true;
    bool ok(size_t at, size_t n) const { return at <= data.size() && n <= data.size() - at; }
    uint32_t u16(size_t at) const {
        const uint32_t a = byte_at(data, at), b = byte_at(data, at + 1);
        return little ? (a | b << 8) : (a << 8 | b);
    }
    uint32_t u32(size_t at) const {
        const uint32_t lo = u16(at), hi = u16(at + 2);
        return little ? (lo | hi << 16) : (lo << 16 | hi);
    }
};

int orientation_in_tiff(std::span<const std::byte> tiff_bytes) {
    Tiff t{tiff_bytes};
    if (!t.ok(0, 8)) return 1;
    if (byte_at(tiff_bytes, 0) == 'I' && byte_at(tiff_bytes, 1) == 'I')
        t.little = true;
    else if (byte_at(tiff_bytes, 0) == 'M' && byte_at(tiff_bytes, 1) == 'M')
        t.little = false;
    else
        return 1;
    if (t.u16(2) != 42) return 1;
    const size_t ifd = t.u32(4);
    if (!t.ok(ifd, 2)) return 1;
    const uint32_t entries = t.u16(ifd);
    for (uint32_t i = 0; i < entries && i < 1024; ++i) {
        const size_t entry = ifd + 2 + size_t{i} * 12;
        if (!t.ok(entry, 12)) return 1;
        if (t.u16(entry) != 0x0112) continue;
        if (t.u16(entry + 2) != 3) return 1;  // SHORT
        const uint32_t value = t.u16(entry + 8);
        return value >= 1 && value <= 8 ? static_cast<int>(value) : 1;
    }
    return 1;
}

}  // namespace

int jpeg_exif_orientation(std::span<const std::byte> jpeg) {
    if (jpeg.size() < 4 || byte_at(jpeg, 0) != 0xFF || byte_at(jpeg, 1) != 0xD8) return 1;
    size_t at = 2;
    while (at + 4 <= jpeg.size()) {
        if (byte_at(jpeg, at) != 0xFF) return 1;
        const uint8_t marker = byte_at(jpeg, at + 1);
        if (marker == 0xFF) {
            ++at;
            continue;
        }                                                // fill byte
        if (marker == 0xDA || marker == 0xD9) return 1;  // image data starts: no APP1 before it
        const size_t length = size_t{byte_at(jpeg, at + 2)} << 8 | byte_at(jpeg, at + 3);
        if (length < 2 || at + 2 + length > jpeg.size()) return 1;
        const auto segment = jpeg.subspan(at + 4, length - 2);
        if (marker == 0xE1 && segment.size() >= 6 && byte_at(segment, 0) == 'E' && byte_at(segment, 1) == 'x' &&
            byte_at(segment, 2) == 'i' && byte_at(segment, 3) == 'f' && byte_at(segment, 4) == 0 &&
            byte_at(segment, 5) == 0)
            return orientation_in_tiff(segment.subspan(6));
        at += 2 + length;
    }
    return 1;
}

void apply_orientation(int orientation, int64_t& width, int64_t& height, std::vector<uint8_t>& rgb) {
    if (orientation <= 1 || orientation > 8) return;
    const int64_t w = width, h = height;
    const bool swap = orientation >= 5;
    const int64_t ow = swap ? h : w, oh = swap ? w : h;
    std::vector<uint8_t> out(rgb.size());
    for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) {
            int64_t ox = x, oy = y;
            switch (orientation) {
                case 2:
                    ox = w - 1 - x;
                    break;  // mirrored
                case 3:
                    ox = w - 1 - x;
                    oy = h - 1 - y;
                    break;  // 180
                case 4:
                    oy = h - 1 - y;
                    break;  // flipped vertically
                case 5:
                    ox = y;
                    oy = x;
                    break;  // transposed
                case 6:
                    ox = h - 1 - y;
                    oy = x;
                    break;  // 90 clockwise
                case 7:
                    ox = h - 1 - y;
                    oy = w - 1 - x;
                    break;  // transversed
                case 8:
                    ox = y;
                    oy = w - 1 - x;
                    break;  // 90 counter-clockwise
                default:
                    break;
            }
            const size_t src = static_cast<size_t>(y * w + x) * 3, dst = static_cast<size_t>(oy * ow + ox) * 3;
            out[dst] = rgb[src];
            out[dst + 1] = rgb[src + 1];
            out[dst + 2] = rgb[src + 2];
        }
    }
    rgb = std::move(out);
    width = ow;
    height = oh;
}

}  // namespace ember::vision
