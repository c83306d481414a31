// SPDX-License-Identifier: MIT
// Per-expert biases (Backend::add_expert_bias), one invocation per output element:
//   out[s, i] += bias[ids[s / k, s % k], i]. Ids outside [0, n_experts) add nothing.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(binding = 0) readonly buffer Bias { float bias[]; };
layout(binding = 1) readonly buffer Ids { int ids[]; };
layout(binding = 2) buffer Out { float out_f[]; };
layout(push_constant) uniform Params {
    uint bias_off, bias_stride;  // words
    uint ids_off, ids_stride;    // words
    uint out_off, out_stride;    // words
    uint cols, k, slots, n_experts;
} p;

void main() {
    const uint idx = linear_group() * 256u + gl_LocalInvocationID.x;
    if (idx >= p.slots * p.cols) return;
    const uint s = idx / p.cols, i = idx % p.cols;
    const int e = ids[p.ids_off + (s / p.k) * p.ids_stride + s % p.k];
    if (e < 0 || uint(e) >= p.n_experts) return;
    out_f[p.out_off + s * p.out_stride + i] += bias[p.bias_off + uint(e) * p.bias_stride + i];
}
