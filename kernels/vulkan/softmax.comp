// SPDX-License-Identifier: MIT
// In-place softmax of each row; one work group per row.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(binding = 0) buffer X { float x[]; };
layout(push_constant) uniform Params {
    uint x_off;
    uint x_stride;
    uint cols;
    uint rows;
} p;

void main() {
    const uint r = linear_group();
    if (r >= p.rows) return;
    const uint row = p.x_off + r * p.x_stride;
    float m = -1.0 / 0.0;
    for (uint i = gl_LocalInvocationID.x; i < p.cols; i += 256u) m = max(m, x[row + i]);
    m = workgroup_max(m);
    float sum = 0.0;
    for (uint i = gl_LocalInvocationID.x; i < p.cols; i += 256u) {
        const float e = exp(x[row + i] - m);
        x[row + i] = e;
        sum += e;
    }
    const float inv = exact_div(1.0, workgroup_sum(sum));
    for (uint i = gl_LocalInvocationID.x; i < p.cols; i += 256u) x[row + i] *= inv;
}
