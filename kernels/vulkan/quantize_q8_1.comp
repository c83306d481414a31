// SPDX-License-Identifier: MIT
// F32 activation rows -> Q8_1 blocks of 32 (q8_1_store.glsl has the format); row r's block b is block
// r * blocks_per_row + b. Eight invocations share a block, so a subgroup reads consecutive activations.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) writeonly buffer Codes { uint codes[]; };
layout(binding = 1) writeonly buffer Scales { vec2 scales[]; };
#define Q8_STORE_INVOCATIONS 256
#include "q8_1_store.glsl"

layout(push_constant) uniform Params {
    uint x_off;     // words
    uint x_stride;  // words between rows
    uint rows;
    uint cols;      // a multiple of 32
    uint q_off;     // words
    uint d_off;     // vec2 units
} p;

void main() {
    const uint lane = gl_LocalInvocationID.x & 7u;
    const uint blocks_per_row = p.cols / 32u;
    const uint block = (linear_group() * 256u + gl_LocalInvocationID.x) / 8u;
    const bool valid = block < p.rows * blocks_per_row;
    const uint row = valid ? block / blocks_per_row : 0u;
    const uint b = valid ? block % blocks_per_row : 0u;
    const uint first = p.x_off + row * p.x_stride + b * 32u + lane * 4u;
    vec4 v = vec4(0.0);
    if (valid) v = vec4(x[first], x[first + 1u], x[first + 2u], x[first + 3u]);
    q8_1_store(v, valid, block, p.q_off, p.d_off);
}
