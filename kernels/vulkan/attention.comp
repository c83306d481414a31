// SPDX-License-Identifier: MIT
// Causal attention of one (token, head) per work group over cache rows j <= position, j < n_kv (and inside the
// window, if any), with an online softmax over chunks of 64 rows: invocation t scores row j0 + t, then every
// invocation adds the chunk's weighted value rows into its share of the head's output dimensions; the head's sink,
// if any, joins in the final normalization. CACHE_F32, CACHE_F16 or CACHE_Q8_0.
#version 450
#include "common.glsl"
layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer Q { float q[]; };
layout(binding = 1) readonly buffer K { uint kc[]; };
layout(binding = 2) readonly buffer V { uint vc[]; };
layout(binding = 3) writeonly buffer Out { float out_f[]; };
layout(binding = 4) readonly buffer Pos { int positions[]; };
layout(binding = 5) readonly buffer Sinks { float sinks[]; };
layout(push_constant) uniform Params {
    uint q_off;      // words
    uint q_stride;   // words
    uint k_off;      // bytes
    uint k_stride;   // bytes
    uint v_off;      // bytes
    uint v_stride;   // bytes
    uint out_off;    // words
    uint out_stride; // words
    uint n_kv;
    uint n_head;
    uint group;      // query heads per kv head
    uint head_dim;
    float scale;
    uint pos_off;    // words
    uint tokens;
    uint window;     // > 0: a query at position p sees rows p - window < j <= p only
    uint sinks_off;  // words
    uint has_sinks;  // 1: sinks[sinks_off + h] is head h's attention sink (Backend::attention)
} p;

#if defined(CACHE_F32)
#define LOAD_K(row, k) uintBitsToFloat(kc[((row) >> 2) + (k)])
#define LOAD_V(row, k) uintBitsToFloat(vc[((row) >> 2) + (k)])
#elif defined(CACHE_F16)
#define LOAD_K(row, k) half_bits_to_float(RD16(kc, (row) + 2u * (k)))
#define LOAD_V(row, k) half_bits_to_float(RD16(vc, (row) + 2u * (k)))
#else
// Q8_0 rows: 34-byte blocks of an fp16 scale (at an even offset) and 32 int8 codes.
#define Q8_LOAD(arr, row, k) (float(int(RD8(arr, (row) + ((k) / 32u) * 34u + 2u + (k) % 32u) << 24) >> 24) * \
                              half_bits_to_float(RD16(arr, (row) + ((k) / 32u) * 34u)))
#define LOAD_K(row, k) Q8_LOAD(kc, row, k)
#define LOAD_V(row, k) Q8_LOAD(vc, row, k)
#endif

shared float q_head[512];
shared float weights[64];

void main() {
    const uint item = linear_group();
    if (item >= p.tokens * p.n_head) return;
    const uint t = item / p.n_head, h = item % p.n_head;
    const uint tid = gl_LocalInvocationID.x;
    const uint hd = p.head_dim;
    const uint kv_col = (h / p.group) * hd;
    for (uint i = tid; i < hd; i += 64u) q_head[i] = q[p.q_off + t * p.q_stride + h * hd + i];
    barrier();
    const uint visible = min(p.n_kv, uint(positions[p.pos_off + t]) + 1u);
    const uint first = first_visible(uint(positions[p.pos_off + t]), p.window);

    float acc[8] = float[8](0, 0, 0, 0, 0, 0, 0, 0);
    float running_max = -1.0 / 0.0;
    float running_sum = 0.0;
    for (uint j0 = first; j0 < visible; j0 += 64u) {
        const uint j = j0 + tid;
        float s = -1.0 / 0.0;
        if (j < visible) {
            const uint krow = p.k_off + j * p.k_stride;
            float d = 0.0;
            for (uint i = 0u; i < hd; ++i) d += q_head[i] * LOAD_K(krow, kv_col + i);
            s = d * p.scale;
        }
        const float new_max = max(running_max, workgroup_max(s));
        const float correction = exp(running_max - new_max);
        const float w = j < visible ? exp(s - new_max) : 0.0;
        weights[tid] = w;
        running_sum = running_sum * correction + workgroup_sum(w);
        running_max = new_max;
        const uint n = min(64u, visible - j0);
        for (uint c = 0u; c < 8u; ++c) {
            const uint dim = tid + 64u * c;
            if (dim >= hd) break;
            float a = acc[c] * correction;
            for (uint jj = 0u; jj < n; ++jj) a += weights[jj] * LOAD_V(p.v_off + (j0 + jj) * p.v_stride, kv_col + dim);
            acc[c] = a;
        }
        barrier();
    }
    const float sink = p.has_sinks != 0u ? sinks[p.sinks_off + h] : 0.0;
    const float inv = attention_scale(running_max, running_sum, p.has_sinks != 0u, sink);
    for (uint c = 0u; c < 8u; ++c) {
        const uint dim = tid + 64u * c;
        if (dim >= hd) break;
        out_f[p.out_off + t * p.out_stride + h * hd + dim] = acc[c] * inv;
    }
}
