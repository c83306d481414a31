// SPDX-License-Identifier: MIT
// The EXIF Orientation tag of a JPEG (APP1 "Exif" segment, TIFF IFD0 tag 0x0112) and applying it to RGB pixels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ember::vision {

// 1..8 as EXIF defines it; 1 (as stored) when the file has no readable tag. Reads only inside `jpeg`.
int jpeg_exif_orientation(std::span<const std::byte> jpeg);

// Turns width x height RGB pixels so that they display upright; swaps width and height for orientations 5..8.
void apply_orientation(int orientation, int64_t& width, int64_t& height, std::vector<uint8_t>& rgb);

}  // namespace ember::vision
