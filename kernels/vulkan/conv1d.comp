// SPDX-License-Identifier: MIT
// Causal depthwise convolution with carried state, one invocation per channel: it walks the batch's tokens over
// the extended sequence [state rows, x rows], then shifts the last kernel - 1 inputs into the state.
#version 450
#include "common.glsl"
layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer Weight { float w[]; };
layout(binding = 2) buffer State { float state[]; };
layout(binding = 3) writeonly buffer Out { float out_f[]; };
layout(push_constant) uniform Params {
    uint x_off;
    uint x_stride;
    uint w_off;
    uint w_stride;
    uint s_off;
    uint s_stride;
    uint out_off;
    uint out_stride;
    uint channels;
    uint kernel;
    uint tokens;
} p;

float input_at(uint i, uint c) {
    return i < p.kernel - 1u ? state[p.s_off + i * p.s_stride + c] : x[p.x_off + (i - (p.kernel - 1u)) * p.x_stride + c];
}

void main() {
    const uint c = gl_GlobalInvocationID.x;
    if (c >= p.channels) return;
    for (uint t = 0u; t < p.tokens; ++t) {
        float sum = 0.0;
        for (uint k = 0u; k < p.kernel; ++k) sum += w[p.w_off + c * p.w_stride + k] * input_at(t + k, c);
        out_f[p.out_off + t * p.out_stride + c] = sum;
    }
    for (uint i = 0u; i + 1u < p.kernel; ++i) state[p.s_off + i * p.s_stride + c] = input_at(p.tokens + i, c);
}
