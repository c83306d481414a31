// SPDX-License-Identifier: MIT
// Rotary embedding in place, one invocation per (row, head, pair). The host computes cos and sin of every angle in
// double (table[row][pair] = (cos, sin)): the GPU's sin/cos are too coarse for positions in the thousands.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(binding = 0) buffer X { float x[]; };
layout(binding = 1) readonly buffer Table { float table[]; };
layout(push_constant) uniform Params {
    uint x_off;
    uint x_stride;
    uint table_off;  // words
    uint rows;
    uint n_heads;
    uint head_dim;
    uint half_rot;   // n_rot / 2
    uint neox;
} p;

void main() {
    const uint idx = linear_group() * 256u + gl_LocalInvocationID.x;
    if (idx >= p.rows * p.n_heads * p.half_rot) return;
    const uint i = idx % p.half_rot;
    const uint h = (idx / p.half_rot) % p.n_heads;
    const uint r = idx / (p.half_rot * p.n_heads);
    const uint base = p.x_off + r * p.x_stride + h * p.head_dim;
    const uint ia = base + (p.neox != 0u ? i : 2u * i);
    const uint ib = base + (p.neox != 0u ? i + p.half_rot : 2u * i + 1u);
    const float c = table[p.table_off + 2u * (r * p.half_rot + i)];
    const float s = table[p.table_off + 2u * (r * p.half_rot + i) + 1u];
    const float x0 = x[ia], x1 = x[ib];
    x[ia] = x0 * c - x1 * s;
    x[ib] = x0 * s + x1 * c;
}
