// SPDX-License-Identifier: MIT
// out[r, :] = table[ids[r], :] as F32. One invocation per element; the grid's y is the output row.
#version 450
#include "common.glsl"
layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer Table { uint W[]; };
layout(binding = 1) readonly buffer Ids { int ids[]; };
layout(binding = 2) writeonly buffer Out { float out_f[]; };
layout(push_constant) uniform Params {
    uint table_off;     // bytes
    uint table_stride;  // bytes
    uint ids_off;       // words
    uint out_off;       // words
    uint out_stride;    // words
    uint cols;
    uint rows;
} p;
#include "dequant.glsl"

void main() {
    const uint k = gl_GlobalInvocationID.x;
    const uint r = gl_WorkGroupID.y;
    if (k >= p.cols || r >= p.rows) return;
    const uint row = p.table_off + uint(ids[p.ids_off + r]) * p.table_stride;
    out_f[p.out_off + r * p.out_stride + k] = dq_elem(row, k);
}
