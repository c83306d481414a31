// SPDX-License-Identifier: MIT
// The second step of attention_split.comp: one work group per (token, query head) merges the chunks' partial
// results (unnormalized values, max m_c, sum l_c): with M = max m_c and f_c = e^(m_c - M),
//   out = sum_c f_c values_c / sum_c f_c l_c
// (with an attention sink, e^(sink - M) joins the denominator, as attention_scale has it). A chunk that saw no
// rows has m_c = -inf and adds nothing. At most 128 chunks.
#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
layout(local_size_x = 128) in;
layout(binding = 0) readonly buffer Part { float part[]; };
layout(binding = 1) writeonly buffer Out { float out_f[]; };
layout(binding = 2) readonly buffer Sinks { float sinks[]; };
layout(push_constant) uniform Params {
    uint out_off;    // words
    uint out_stride; // words
    uint n_head;
    uint head_dim;
    uint n_chunks;
    uint tokens;
    uint sinks_off;  // words
    uint has_sinks;  // 1: sinks[sinks_off + h] is head h's attention sink
} p;

shared float factor[128];

void main() {
    const uint item = linear_group();
    if (item >= p.tokens * p.n_head) return;
    const uint t = item / p.n_head, h = item % p.n_head;
    const uint tid = gl_LocalInvocationID.x;
    const uint hd = p.head_dim;
    const uint slot = hd + 2u;
    const uint base = item * p.n_chunks * slot;

    const bool mine = tid < p.n_chunks;
    const float m = mine ? part[base + tid * slot + hd] : -1.0 / 0.0;
    const float l = mine ? part[base + tid * slot + hd + 1u] : 0.0;
    const float top = workgroup_max(m);
    const float f = m > -1.0 / 0.0 ? exp(m - top) : 0.0;
    const float total = workgroup_sum(f * l);
    factor[tid] = f;
    barrier();
    const float sink = p.has_sinks != 0u ? sinks[p.sinks_off + h] : 0.0;
    const float inv = attention_scale(top, total, p.has_sinks != 0u, sink);
    for (uint dim = tid; dim < hd; dim += 128u) {
        float s = 0.0;
        for (uint c0 = 0u; c0 < p.n_chunks; c0 += 4u) {  // four loads in flight
            [[unroll]] for (uint c = c0; c < c0 + 4u; ++c) {
                if (c < p.n_chunks && factor[c] != 0.0) s += factor[c] * part[base + c * slot + dim];
            }
        }
        out_f[p.out_off + t * p.out_stride + h * hd + dim] = s * inv;
    }
}
