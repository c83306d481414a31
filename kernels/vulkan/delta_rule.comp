// SPDX-License-Identifier: MIT
// The gated delta rule, token by token (the recurrent form of backend.h's DeltaRuleArgs). Column j of a value
// head's state S [d_k][d_v] evolves independently of the other columns, so one invocation owns one (head, j)
// pair and keeps its column in registers:
//   S = e^g S;  delta = beta (v_j - S^T k);  S += k delta;  o_j = S^T (q_scale q)
// The last `n_snap` tokens also write the state after them to the snapshot rows.
#version 450
#include "common.glsl"
layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer Q { float q[]; };
layout(binding = 1) readonly buffer K { float k[]; };
layout(binding = 2) readonly buffer V { float v[]; };
layout(binding = 3) readonly buffer G { float g[]; };
layout(binding = 4) readonly buffer Beta { float beta_v[]; };
layout(binding = 5) buffer State { float state[]; };
layout(binding = 6) writeonly buffer Out { float out_f[]; };
layout(binding = 7) writeonly buffer Snap { float snap[]; };
layout(push_constant) uniform Params {
    uint q_off, q_stride, k_off, k_stride;
    uint v_off, v_stride, g_off, g_stride, beta_off, beta_stride;
    uint s_off, out_off, out_stride, snap_off, snap_stride;
    uint tokens, n_snap, n_k_heads, n_v_heads, d_k, d_v;
    float q_scale;
} p;

const uint MAX_DK = 128u;

void main() {
    const uint idx = gl_GlobalInvocationID.x;
    if (idx >= p.n_v_heads * p.d_v) return;
    const uint h = idx / p.d_v, j = idx % p.d_v;
    const uint kh = h % p.n_k_heads;
    const uint head_state = p.d_k * p.d_v;
    const uint s_base = p.s_off + h * head_state + j;
    float col[MAX_DK];
    for (uint i = 0u; i < MAX_DK; ++i) col[i] = i < p.d_k ? state[s_base + i * p.d_v] : 0.0;

    for (uint t = 0u; t < p.tokens; ++t) {
        const float decay = exp(g[p.g_off + t * p.g_stride + h]);
        const uint kb = p.k_off + t * p.k_stride + kh * p.d_k;
        const uint qb = p.q_off + t * p.q_stride + kh * p.d_k;
        float d = 0.0;
        for (uint i = 0u; i < MAX_DK; ++i) {
            if (i >= p.d_k) break;
            col[i] *= decay;
            d += col[i] * k[kb + i];
        }
        const float beta = beta_v[p.beta_off + t * p.beta_stride + h];
        d = beta * (v[p.v_off + t * p.v_stride + h * p.d_v + j] - d);
        float o = 0.0;
        for (uint i = 0u; i < MAX_DK; ++i) {
            if (i >= p.d_k) break;
            col[i] += k[kb + i] * d;
            o += col[i] * (q[qb + i] * p.q_scale);
        }
        out_f[p.out_off + t * p.out_stride + h * p.d_v + j] = o;
        if (t + p.n_snap >= p.tokens) {
            const uint row = p.snap_off + (t + p.n_snap - p.tokens) * p.snap_stride + h * head_state + j;
            for (uint i = 0u; i < MAX_DK; ++i) {
                if (i >= p.d_k) break;
                snap[row + i * p.d_v] = col[i];
            }
        }
    }
    for (uint i = 0u; i < MAX_DK; ++i)
        if (i < p.d_k) state[s_base + i * p.d_v] = col[i];
}
