// SPDX-License-Identifier: MIT
// The compiled compute shaders, embedded at build time (kernels/vulkan/CMakeLists.txt), sorted by name:
// "<shader>_<gguf type name>" for per-type variants (matvec_q4_0, convert_f32_to_q8_0, attention_f16), or the
// shader's name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace ember::vk_kernels {

struct SpirvModule {
    const char* name;
    const uint32_t* words;
    size_t word_count;
};

std::span<const SpirvModule> spirv_modules();

}  // namespace ember::vk_kernels
