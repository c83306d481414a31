// SPDX-License-Identifier: MIT
// The gated delta rule, token by token (the recurrent form of backend.h's DeltaRuleArgs). Column j of a value
// head's state S [d_k][d_v] evolves independently of the other columns:
//   S = e^g S;  delta = beta (v_j - S^T k);  S += k delta;  o_j = S^T (q_scale q)
// LANES neighbouring invocations of one subgroup share a (head, j) column: lane l keeps rows l, l + LANES, ...
// (at most MAX_DK / LANES of them, in registers: constant-bounded loops that unroll), and the two dot products
// per token are summed over the lanes with subgroup shuffles. LANES 1 (one invocation per column, no subgroup
// operations) is the fallback for devices with subgroups narrower than 8.
// The last `n_snap` tokens also write the state after them to the snapshot rows.
#version 450
#ifndef LANES
#define LANES 1
#endif
#extension GL_EXT_control_flow_attributes : require
#if LANES > 1
#extension GL_KHR_shader_subgroup_shuffle : require
#define ROW_LOOP [[unroll]]
#else
#define ROW_LOOP  // 128 rows: a loop, as unrolling them would not keep them in registers anyway
#endif
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
const uint NL = uint(LANES);
const uint ROWS = MAX_DK / NL;

float lanes_sum(float x) {
#if LANES > 1
    [[unroll]] for (uint step = NL / 2u; step > 0u; step /= 2u) x += subgroupShuffleXor(x, step);
#endif
    return x;
}

// Token t's inputs of column j of value head h (key head kh) for this lane: its rows of k and of q_scale q, and
// the head's decay, beta and v_j.
void load_token(uint t, uint h, uint kh, uint j, uint lane, out float kt[ROWS], out float qt[ROWS], out float gt,
                out float bt, out float vt) {
    const uint kb = p.k_off + t * p.k_stride + kh * p.d_k;
    const uint qb = p.q_off + t * p.q_stride + kh * p.d_k;
    ROW_LOOP for (uint r = 0u; r < ROWS; ++r) {
        const uint i = lane + NL * r;
        kt[r] = i < p.d_k ? k[kb + i] : 0.0;
        qt[r] = i < p.d_k ? q[qb + i] * p.q_scale : 0.0;
    }
    gt = g[p.g_off + t * p.g_stride + h];
    bt = beta_v[p.beta_off + t * p.beta_stride + h];
    vt = v[p.v_off + t * p.v_stride + h * p.d_v + j];
}

void main() {
#if LANES > 1
    // Lanes of a column are neighbours in one subgroup, whatever the subgroup size (>= LANES).
    const uint local = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
#else
    const uint local = gl_LocalInvocationID.x;
#endif
    const uint idx = linear_group() * 64u + local;
    const uint column = idx / NL, lane = idx % NL;
    if (column >= p.n_v_heads * p.d_v) return;  // whole columns: their lanes leave together
    const uint h = column / p.d_v, j = column % p.d_v;
    const uint kh = h % p.n_k_heads;
    const uint head_state = p.d_k * p.d_v;
    const uint s_base = p.s_off + h * head_state + j;
    float col[ROWS];
    ROW_LOOP for (uint r = 0u; r < ROWS; ++r) {
        const uint i = lane + NL * r;
        col[r] = i < p.d_k ? state[s_base + i * p.d_v] : 0.0;
    }

    // Each token's inputs are loaded while the previous token computes (a prefill walks hundreds of tokens).
    float kn[ROWS], qn[ROWS], gn, bn, vn;
    load_token(0u, h, kh, j, lane, kn, qn, gn, bn, vn);
    for (uint t = 0u; t < p.tokens; ++t) {
        const float kr[ROWS] = kn, qr[ROWS] = qn;
        const float decay = exp(gn), beta = bn, vj = vn;
        if (t + 1u < p.tokens) load_token(t + 1u, h, kh, j, lane, kn, qn, gn, bn, vn);
        float d = 0.0;
        ROW_LOOP for (uint r = 0u; r < ROWS; ++r) {
            col[r] *= decay;
            d += col[r] * kr[r];
        }
        d = beta * (vj - lanes_sum(d));
        float o = 0.0;
        ROW_LOOP for (uint r = 0u; r < ROWS; ++r) {
            col[r] += kr[r] * d;
            o += col[r] * qr[r];
        }
        o = lanes_sum(o);
        if (lane == 0u) out_f[p.out_off + t * p.out_stride + h * p.d_v + j] = o;
        if (t + p.n_snap >= p.tokens) {
            const uint row = p.snap_off + (t + p.n_snap - p.tokens) * p.snap_stride + h * head_state + j;
            ROW_LOOP for (uint r = 0u; r < ROWS; ++r) {
                const uint i = lane + NL * r;
                if (i < p.d_k) snap[row + i * p.d_v] = col[r];
            }
        }
    }
    ROW_LOOP for (uint r = 0u; r < ROWS; ++r) {
        const uint i = lane + NL * r;
        if (i < p.d_k) state[s_base + i * p.d_v] = col[r];
    }
}
