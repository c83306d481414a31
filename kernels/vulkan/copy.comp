// SPDX-License-Identifier: MIT
// dst = src in 16-byte units: the memory-bandwidth yardstick of `ember-cli devices --bandwidth` and convert's
// F32 -> F32 path for contiguous tensors whose size and offsets are multiples of 16 bytes.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(binding = 0) readonly buffer Src { uvec4 src[]; };
layout(binding = 1) writeonly buffer Dst { uvec4 dst[]; };
layout(push_constant) uniform Params {
    uint src_off;  // 16-byte units
    uint dst_off;
    uint count;
} p;

void main() {
    const uint i = linear_group() * 256u + gl_LocalInvocationID.x;
    if (i < p.count) dst[p.dst_off + i] = src[p.src_off + i];
}
