// SPDX-License-Identifier: MIT
// F32 activation rows -> Q8_1 blocks of 32, the input of the integer dot product kernels (matvec_dot.comp).
// Per block: d = max|x| / 127, codes q = round(x / d) (half away from zero, in [-127, 127]; a non-finite x gives
// 0) and s = d * sum(q).
// Layout (in 32-bit words from the scratch binding's start):
//   codes: at q_off, row r's block b at q_off + (r * blocks_per_row + b) * 8: 8 words, each 4 int8 codes,
//          little-endian (code i of the block in byte i % 4 of word i / 4);
//   scales: vec2 (d, s) at vec2 index d_off + r * blocks_per_row + b (d_off counted in vec2, i.e. 8-byte units).
// Eight invocations share a block (each packs one word from four consecutive elements), so a subgroup reads
// consecutive activations.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) writeonly buffer Codes { uint codes[]; };
layout(binding = 1) writeonly buffer Scales { vec2 scales[]; };

layout(push_constant) uniform Params {
    uint x_off;     // words
    uint x_stride;  // words between rows
    uint rows;
    uint cols;      // a multiple of 32
    uint q_off;     // words
    uint d_off;     // vec2 units
} p;

shared float block_max[256];
shared int block_sum[256];

int quantize(float v, float inv_d) {
    const float t = v * inv_d;
    if (!(abs(t) <= 127.5)) return 0;  // NaN or infinite input
    return int(clamp(sign(t) * floor(abs(t) + 0.5), -127.0, 127.0));
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint lane = tid & 7u;
    const uint blocks_per_row = p.cols / 32u;
    const uint block = (linear_group() * 256u + tid) / 8u;
    const bool valid = block < p.rows * blocks_per_row;
    const uint row = valid ? block / blocks_per_row : 0u;
    const uint b = valid ? block % blocks_per_row : 0u;
    const uint first = p.x_off + row * p.x_stride + b * 32u + lane * 4u;
    vec4 v = vec4(0.0);
    if (valid) v = vec4(x[first], x[first + 1u], x[first + 2u], x[first + 3u]);

    const vec4 a = abs(v);
    block_max[tid] = max(max(a.x, a.y), max(a.z, a.w));
    barrier();
    for (uint step = 4u; step > 0u; step >>= 1) {
        if (lane < step) block_max[tid] = max(block_max[tid], block_max[tid + step]);
        barrier();
    }
    const float amax = block_max[tid & ~7u];
    const float d = amax / 127.0;
    const float inv_d = amax > 0.0 ? 127.0 / amax : 0.0;
    const ivec4 q = ivec4(quantize(v.x, inv_d), quantize(v.y, inv_d), quantize(v.z, inv_d), quantize(v.w, inv_d));

    block_sum[tid] = q.x + q.y + q.z + q.w;
    barrier();
    for (uint step = 4u; step > 0u; step >>= 1) {
        if (lane < step) block_sum[tid] += block_sum[tid + step];
        barrier();
    }
    if (!valid) return;
    codes[p.q_off + block * 8u + lane] =
        (uint(q.x) & 0xffu) | ((uint(q.y) & 0xffu) << 8) | ((uint(q.z) & 0xffu) << 16) | (uint(q.w) << 24);
    if (lane == 0u) scales[p.d_off + block] = vec2(d, d * float(block_sum[tid]));
}
