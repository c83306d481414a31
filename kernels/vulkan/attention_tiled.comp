// SPDX-License-Identifier: MIT
// Attention of many queries (prefill, a vision encoder's bidirectional attention) in tiles (flash attention). One
// work group takes BQ queries of one head and walks the cache rows they see (j <= position, j < n_kv) in tiles of
// BK rows, each staged once in shared memory (as floats) for all BQ queries; rows past the last one any of its
// queries sees are never read. Invocations work in teams of 8 neighbouring lanes of a subgroup; team g holds
// queries g + G * i (i < 4, G = BQ / 4), and lane l of it computes
//   scores:  its 4 queries x rows l + 8k (k < KPL) of the tile: per 4 dims, 4 shared loads of Q and KPL of K for
//            16 * KPL multiply-adds; then an online softmax per query, the running max agreed by the team's
//            shuffles, each lane keeping its share of the running sum;
//   values:  its 4 queries x output chunks [4c, 4c + 4), c = l + 8n, and single dims of any remaining chunks, from
//            each row's weights (shuffled from the lane that scored the row) and the staged V row.
// The head's sink, if any, joins each query's softmax in the final normalization.
// While one tile is in use the next is in flight into registers (V during the scores, the next K during the
// values). Shared memory holds Q and one K/V tile: 64 queries x 32 rows up to head size 80 (31.5 KiB at 80), 32 x
// 16 above (24 KiB at 128).
// HEAD_DIM: a multiple of 16 or 24 up to 128; CACHE_F32 or CACHE_F16 (rows at 4-byte offsets). Needs a subgroup
// size of at least 8.
#version 450
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#if HEAD_DIM > 128 || (HEAD_DIM % 16 != 0 && HEAD_DIM % 24 != 0)
#error "HEAD_DIM: a multiple of 16 or 24 up to 128"
#endif

#if HEAD_DIM > 80
#define BQ 32u                                 // queries per work group
#define KPL 2u                                 // keys per lane per tile
#else
#define BQ 64u
#define KPL 4u
#endif
#define RQ 4u                                  // queries per invocation
#define LANES 8u                               // invocations per team
#define G (BQ / RQ)                            // teams
#define WG (G * LANES)
#define BK (KPL * LANES)                       // cache rows per tile
#define HD4 (uint(HEAD_DIM) / 4u)
#define STEPS (HD4 % 3u == 0u ? 3u : 4u)      // chunks of a score step (HD4 is a multiple of 3 or 4)
#define ROWS 4u                                // rows of a value step
// Output dims per invocation: chunks [4c, 4c + 4) for c = lane + 8n, n < NF, then single dims of the remaining
// chunks (dim TAIL + lane + 8m, m < TD), so that no lane idles.
#define NF (HD4 / LANES)
#define TD ((HD4 % LANES) / 2u)
#define TAIL (4u * LANES * NF)
#define NFA (NF > 0u ? NF : 1u)                // array sizes
#define TDA (TD > 0u ? TD : 1u)
#define NL ((BK * HD4 + WG - 1u) / WG)         // chunks of a tile each invocation loads

// Where chunk c of shared row `row` sits. The 8 rows or chunks that one load of a team touches must fall in
// distinct banks: rows of a multiple of 8 chunks are swizzled (c ^ row % 8), other rows padded to an odd stride.
#if HEAD_DIM % 32 == 0
#define STRIDE HD4
#define SLOT(row, c) ((row) * STRIDE + ((c) ^ ((row) & 7u)))
#else
#define STRIDE (HD4 | 1u)
#define SLOT(row, c) ((row) * STRIDE + (c))
#endif

layout(local_size_x = WG) in;
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
    uint head_dim;   // HEAD_DIM
    float scale;
    uint pos_off;    // words
    uint tokens;
    uint window;     // > 0: a query at position p sees rows p - window < j <= p only
    uint sinks_off;  // words
    uint has_sinks;  // 1: sinks[sinks_off + h] is head h's attention sink (Backend::attention)
} p;

// A tile's rows travel as raw words and become floats when they are staged.
#if defined(CACHE_F32)
#define RAW uvec4
#define LOAD_RAW(arr, row_byte, col) \
    uvec4(arr[((row_byte) >> 2) + (col)], arr[((row_byte) >> 2) + (col) + 1u], \
          arr[((row_byte) >> 2) + (col) + 2u], arr[((row_byte) >> 2) + (col) + 3u])
vec4 unpack_raw(uvec4 r) { return uintBitsToFloat(r); }
#else
#define RAW uvec2
#define LOAD_RAW(arr, row_byte, col) \
    uvec2(arr[((row_byte) >> 2) + ((col) >> 1)], arr[((row_byte) >> 2) + ((col) >> 1) + 1u])
vec4 unpack_raw(uvec2 r) {
    // The GPU's conversion is exact but may flush subnormals: halves with a zero exponent take the long way.
    if ((r.x & 0x7c00u) != 0u && (r.x & 0x7c000000u) != 0u && (r.y & 0x7c00u) != 0u && (r.y & 0x7c000000u) != 0u)
        return vec4(unpackHalf2x16(r.x), unpackHalf2x16(r.y));
    return vec4(half_bits_to_float(r.x & 0xffffu), half_bits_to_float(r.x >> 16), half_bits_to_float(r.y & 0xffffu),
                half_bits_to_float(r.y >> 16));
}
#endif

shared vec4 q_sh[BQ * STRIDE];  // the queries, scaled
shared vec4 kv_sh[BK * STRIDE]; // a tile of K, then of V

// Rows [j0, j0 + BK) clipped to `end`, kv head columns from kv_col; rows past `end` are zeros.
#define LOAD_TILE(arr, off, stride, j0, end, kv_col, tid, raw)                          \
    [[unroll]] for (uint u = 0u; u < NL; ++u) {                                         \
        const uint e = (tid) + WG * u;                                                  \
        const uint r = e / HD4;                                                         \
        raw[u] = RAW(0u);                                                               \
        if (e < BK * HD4 && (j0) + r < (end))                                          \
            raw[u] = LOAD_RAW(arr, (off) + ((j0) + r) * (stride), (kv_col) + 4u * (e % HD4)); \
    }

void stage(uint tid, RAW raw[NL]) {
    [[unroll]] for (uint u = 0u; u < NL; ++u) {
        const uint e = tid + WG * u;
        if (e < BK * HD4) kv_sh[SLOT(e / HD4, e % HD4)] = unpack_raw(raw[u]);
    }
}

void main() {
    const uint n_tiles = (p.tokens + BQ - 1u) / BQ;
    const uint item = linear_group();
    if (item >= n_tiles * p.n_head) return;
    // Tiles of later queries first: in a causal prefill they see the most rows.
    const uint tile = n_tiles - 1u - item % n_tiles;
    const uint h = item / n_tiles;
    const uint kv_col = (h / p.group) * HD4 * 4u;
    const uint t0 = tile * BQ;
    const uint tid = gl_LocalInvocationID.x;
    // Teams are made of neighbouring invocations of one subgroup, whatever the subgroup size (>= 8).
    const uint inv_id = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
    const uint team = inv_id / LANES, lane = inv_id % LANES;
    const uint team_base = gl_SubgroupInvocationID & ~(LANES - 1u);

    for (uint e = tid; e < BQ * HD4; e += WG) {
        const uint r = e / HD4, c = e % HD4;
        vec4 x = vec4(0.0);
        if (t0 + r < p.tokens) {
            const uint b = p.q_off + (t0 + r) * p.q_stride + h * HD4 * 4u + 4u * c;
            x = vec4(q[b], q[b + 1u], q[b + 2u], q[b + 3u]) * p.scale;
        }
        q_sh[SLOT(r, c)] = x;
    }
    uint first[RQ], visible[RQ];  // rows [first, visible) each of this invocation's queries sees
    [[unroll]] for (uint i = 0u; i < RQ; ++i) {
        const uint t = t0 + team + G * i;
        const uint pos = t < p.tokens ? uint(positions[p.pos_off + t]) : 0u;
        first[i] = first_visible(pos, p.window);
        visible[i] = t < p.tokens ? min(p.n_kv, pos + 1u) : 0u;
    }
    uint begin = 0xffffffffu, end = 0u;  // rows seen by any query of the tile
    for (uint t = t0; t < min(t0 + BQ, p.tokens); ++t) {
        const uint pos = uint(positions[p.pos_off + t]);
        begin = min(begin, first_visible(pos, p.window));
        end = max(end, min(p.n_kv, pos + 1u));
    }

    float run_max[RQ], run_sum[RQ];  // per query: the team's running max, this lane's part of the running sum
    vec4 acc[RQ * NFA];
    float acc_tail[RQ * TDA];
    [[unroll]] for (uint i = 0u; i < RQ; ++i) {
        run_max[i] = -1.0 / 0.0;
        run_sum[i] = 0.0;
        [[unroll]] for (uint c = 0u; c < NF; ++c) acc[i * NF + c] = vec4(0.0);
        [[unroll]] for (uint m = 0u; m < TD; ++m) acc_tail[i * TD + m] = 0.0;
    }
    RAW raw[NL];
    LOAD_TILE(kc, p.k_off, p.k_stride, begin, end, kv_col, tid, raw);
    for (uint j0 = begin; j0 < end; j0 += BK) {
        barrier();  // the previous tile's values are done with kv_sh
        stage(tid, raw);
        barrier();
        LOAD_TILE(vc, p.v_off, p.v_stride, j0, end, kv_col, tid, raw);

        float s[RQ * KPL];
        [[unroll]] for (uint i = 0u; i < RQ * KPL; ++i) s[i] = 0.0;
        // Steps of a few chunks: loads in flight together, without unrolling the whole row (which costs lavapipe's
        // compiler time).
        [[dont_unroll]] for (uint c0 = 0u; c0 < HD4; c0 += STEPS) {
            [[unroll]] for (uint c = c0; c < c0 + STEPS; ++c) {
                vec4 qv[RQ], kv[KPL];
                [[unroll]] for (uint i = 0u; i < RQ; ++i) qv[i] = q_sh[SLOT(team + G * i, c)];
                [[unroll]] for (uint k = 0u; k < KPL; ++k) kv[k] = kv_sh[SLOT(lane + LANES * k, c)];
                [[unroll]] for (uint i = 0u; i < RQ; ++i) {
                    [[unroll]] for (uint k = 0u; k < KPL; ++k) {
                        float d = s[i * KPL + k];
                        d = fma(qv[i].x, kv[k].x, d);
                        d = fma(qv[i].y, kv[k].y, d);
                        d = fma(qv[i].z, kv[k].z, d);
                        s[i * KPL + k] = fma(qv[i].w, kv[k].w, d);
                    }
                }
            }
        }
        [[unroll]] for (uint i = 0u; i < RQ; ++i) {
            float top = -1.0 / 0.0;
            [[unroll]] for (uint k = 0u; k < KPL; ++k) {
                const uint j = j0 + lane + LANES * k;
                if (j < first[i] || j >= visible[i]) s[i * KPL + k] = -1.0 / 0.0;
                top = max(top, s[i * KPL + k]);
            }
            top = max(top, subgroupShuffleXor(top, 1u));
            top = max(top, subgroupShuffleXor(top, 2u));
            top = max(top, subgroupShuffleXor(top, 4u));
            const float new_max = max(run_max[i], top);
            // -inf until the query has seen a row: nothing to weigh, nothing to rescale.
            const bool none = new_max == -1.0 / 0.0;
            const float correction = none ? 1.0 : exp(run_max[i] - new_max);
            float sum = 0.0;
            [[unroll]] for (uint k = 0u; k < KPL; ++k) {
                const float w = none ? 0.0 : exp(s[i * KPL + k] - new_max);
                s[i * KPL + k] = w;
                sum += w;
            }
            run_sum[i] = run_sum[i] * correction + sum;
            run_max[i] = new_max;
            [[unroll]] for (uint c = 0u; c < NF; ++c) acc[i * NF + c] *= correction;
            [[unroll]] for (uint m = 0u; m < TD; ++m) acc_tail[i * TD + m] *= correction;
        }

        barrier();  // the scores are done with K
        stage(tid, raw);
        barrier();
        if (j0 + BK < end) LOAD_TILE(kc, p.k_off, p.k_stride, j0 + BK, end, kv_col, tid, raw);

        // Row r's weights are in lane r % 8 of the team, in its s[i * KPL + r / 8].
        [[dont_unroll]] for (uint r0 = 0u; r0 < BK; r0 += ROWS) {
            [[unroll]] for (uint r = r0; r < r0 + ROWS; ++r) {
                const uint k = r / LANES;
                float w[RQ];
                [[unroll]] for (uint i = 0u; i < RQ; ++i) {
                    float x = s[i * KPL];
                    [[unroll]] for (uint kk = 1u; kk < KPL; ++kk) x = k == kk ? s[i * KPL + kk] : x;
                    w[i] = subgroupShuffle(x, team_base | (r % LANES));
                }
                [[unroll]] for (uint c = 0u; c < NF; ++c) {
                    const vec4 v = kv_sh[SLOT(r, lane + LANES * c)];
                    [[unroll]] for (uint i = 0u; i < RQ; ++i) acc[i * NF + c] = fma(vec4(w[i]), v, acc[i * NF + c]);
                }
                [[unroll]] for (uint m = 0u; m < TD; ++m) {
                    const uint d = TAIL + lane + LANES * m;
                    const float v = kv_sh[SLOT(r, d / 4u)][d % 4u];
                    [[unroll]] for (uint i = 0u; i < RQ; ++i)
                        acc_tail[i * TD + m] = fma(w[i], v, acc_tail[i * TD + m]);
                }
            }
        }
    }

    const float sink = p.has_sinks != 0u ? sinks[p.sinks_off + h] : 0.0;
    [[unroll]] for (uint i = 0u; i < RQ; ++i) {
        float sum = run_sum[i];
        sum += subgroupShuffleXor(sum, 1u);
        sum += subgroupShuffleXor(sum, 2u);
        sum += subgroupShuffleXor(sum, 4u);
        const uint t = t0 + team + G * i;
        if (t < p.tokens) {
            const float inv = attention_scale(run_max[i], sum, p.has_sinks != 0u, sink);
            const uint o = p.out_off + t * p.out_stride + h * HD4 * 4u;
            [[unroll]] for (uint c = 0u; c < NF; ++c) {
                const uint d = 4u * (lane + LANES * c);
                const vec4 r = acc[i * NF + c] * inv;
                out_f[o + d] = r.x;
                out_f[o + d + 1u] = r.y;
                out_f[o + d + 2u] = r.z;
                out_f[o + d + 3u] = r.w;
            }
            [[unroll]] for (uint m = 0u; m < TD; ++m) out_f[o + TAIL + lane + LANES * m] = acc_tail[i * TD + m] * inv;
        }
    }
}
