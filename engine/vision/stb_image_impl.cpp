// SPDX-License-Identifier: MIT
// The one translation unit that compiles stb_image (Debian's libstb-dev header): only the formats Ember accepts,
// no stdio (files are read by load_image), and a dimension cap well above kMaxDecodedPixels' side.
#define STB_IMAGE_IMPLEMENTATION
#define STBI_NO_STDIO
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_BMP
#define STBI_ONLY_GIF
#define STBI_MAX_DIMENSIONS (1 << 20)
#include <stb/stb_image.h>
