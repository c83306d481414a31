// SPDX-License-Identifier: MIT
// Causal attention with the cache rows split into chunks (flash decoding). One work group takes one token, one kv
// head, up to 8 of the query heads that share it, and one chunk of rows [chunk * chunk_len, +chunk_len) clipped
// to the rows the token sees (j <= position, j < n_kv). Rows go in tiles of 32:
//   scores: a team of 8 neighbouring invocations reads one row coalesced (4 elements each per 32-element step)
//           and dots it with every query head of the batch; the 8 partial dots of 8 heads are summed by a
//           butterfly of subgroup shuffles that leaves head h's score in lane h (7 shuffles, not 24).
//   softmax: team h keeps head h's running max and sum (online softmax across tiles).
//   values:  invocation i adds the tile's weighted value rows into output dims i, i + 128, ... of every head.
// With one chunk the normalized result (the head's sink, if any, in the normalization) goes straight to `out`;
// otherwise (max, sum, unnormalized values) go to `part` for attention_combine.comp, which adds the sink. Needs a
// subgroup size of at least 8 (the host checks).
// CACHE_F32, CACHE_F16 (rows at 4-byte offsets) or CACHE_Q8_0 (whole 32-element blocks per head).
#version 450
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
layout(local_size_x = 128) in;
layout(binding = 0) readonly buffer Q { float q[]; };
layout(binding = 1) readonly buffer K { uint kc[]; };
layout(binding = 2) readonly buffer V { uint vc[]; };
layout(binding = 3) writeonly buffer Out { float out_f[]; };
layout(binding = 4) readonly buffer Pos { int positions[]; };
layout(binding = 5) writeonly buffer Part { float part[]; };
layout(binding = 6) readonly buffer Sinks { float sinks[]; };
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
    uint n_head_kv;
    uint batch_heads;  // query heads per work group: <= 8, batch_heads * head_dim <= 2048
    uint n_batches;    // work groups per kv head and chunk: ceil(group / batch_heads)
    uint n_chunks;
    uint chunk_len;    // rows, a multiple of TILE
} p;

const uint WG = 128u;
const uint TEAM = 8u;
const uint TEAMS = WG / TEAM;
const uint TILE = 32u;
const uint MAX_HEADS = 8u;
const uint MAX_DIMS = 4u;  // output dims per invocation: head_dim <= 512
const uint STEPS = 4u;  // 32-element steps of a team over a row whose loads are issued together

#if defined(CACHE_F32)
vec4 load_k4(uint row, uint k) {
    const uint w = (row >> 2) + k;
    return vec4(uintBitsToFloat(kc[w]), uintBitsToFloat(kc[w + 1u]), uintBitsToFloat(kc[w + 2u]),
                uintBitsToFloat(kc[w + 3u]));
}
#define LOAD_V(row, k) uintBitsToFloat(vc[((row) >> 2) + (k)])
#elif defined(CACHE_F16)
vec4 load_k4(uint row, uint k) {
    const uint w = (row >> 2) + (k >> 1);
    const uint a = kc[w], b = kc[w + 1u];
    return vec4(half_bits_to_float(a & 0xffffu), half_bits_to_float(a >> 16), half_bits_to_float(b & 0xffffu),
                half_bits_to_float(b >> 16));
}
#define LOAD_V(row, k) half_bits_to_float(RD16(vc, (row) + 2u * (k)))
#else
// Q8_0 rows: 34-byte blocks of an fp16 scale (at an even offset) and 32 int8 codes; k is a multiple of 4.
vec4 load_k4(uint row, uint k) {
    const uint block = row + (k / 32u) * 34u;
    const uint codes = RD32_2(kc, block + 2u + k % 32u);
    const ivec4 c = ivec4(int(codes << 24) >> 24, int(codes << 16) >> 24, int(codes << 8) >> 24, int(codes) >> 24);
    return vec4(c) * half_bits_to_float(RD16(kc, block));
}
#define LOAD_V(row, k) (float(int(RD8(vc, (row) + ((k) / 32u) * 34u + 2u + (k) % 32u) << 24) >> 24) * \
                        half_bits_to_float(RD16(vc, (row) + ((k) / 32u) * 34u)))
#endif

shared vec4 q_sh[512];                    // the batch's queries, 4 dims a slot
shared vec4 w_sh[MAX_HEADS * TILE / 4u];  // a tile's scores, then its softmax weights, 4 rows a slot
shared float corr_sh[MAX_HEADS];       // per head: how much the accumulated values shrink for this tile
shared float stat_sh[2u * MAX_HEADS];  // per head: final max and sum

float team_sum(float v) {
    v += subgroupShuffleXor(v, 4u);
    v += subgroupShuffleXor(v, 2u);
    return v + subgroupShuffleXor(v, 1u);
}

float team_max(float v) {
    v = max(v, subgroupShuffleXor(v, 4u));
    v = max(v, subgroupShuffleXor(v, 2u));
    return max(v, subgroupShuffleXor(v, 1u));
}

// Sums the 8 lanes' dot[0..7] so that lane l ends with the total of dot[l]: each step sends the half of the
// values whose head bit differs from the lane's bit and keeps the other half.
float team_transpose_sum(float d[MAX_HEADS], uint lane) {
    const bool b2 = (lane & 4u) != 0u, b1 = (lane & 2u) != 0u, b0 = (lane & 1u) != 0u;
    float h4[4];
    [[unroll]] for (uint i = 0u; i < 4u; ++i) {
        const float keep = b2 ? d[i + 4u] : d[i];
        const float send = b2 ? d[i] : d[i + 4u];
        h4[i] = keep + subgroupShuffleXor(send, 4u);
    }
    float h2[2];
    [[unroll]] for (uint i = 0u; i < 2u; ++i) {
        const float keep = b1 ? h4[i + 2u] : h4[i];
        const float send = b1 ? h4[i] : h4[i + 2u];
        h2[i] = keep + subgroupShuffleXor(send, 2u);
    }
    const float keep = b0 ? h2[1] : h2[0];
    const float send = b0 ? h2[0] : h2[1];
    return keep + subgroupShuffleXor(send, 1u);
}

void main() {
    uint item = linear_group();
    const uint per_token = p.n_head_kv * p.n_batches * p.n_chunks;
    if (item >= p.tokens * per_token) return;
    const uint t = item / per_token;
    item %= per_token;
    const uint chunk = item % p.n_chunks;
    item /= p.n_chunks;
    const uint batch = item % p.n_batches;
    const uint kvh = item / p.n_batches;
    const uint head0 = kvh * p.group + batch * p.batch_heads;
    const uint nh = min(p.batch_heads, p.group - batch * p.batch_heads);
    const uint hd = p.head_dim;
    const uint kv_col = kvh * hd;
    // Teams are made of neighbouring invocations of one subgroup, whatever the subgroup size (>= 8).
    const uint inv_id = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
    const uint team = inv_id / TEAM, lane = inv_id % TEAM;

    const uint visible = min(p.n_kv, uint(positions[p.pos_off + t]) + 1u);
    // Chunks count from the first row the token sees (the window's, or row 0).
    const uint begin = first_visible(uint(positions[p.pos_off + t]), p.window) + chunk * p.chunk_len;
    const uint end = min(visible, begin + p.chunk_len);

    const uint q_base = p.q_off + t * p.q_stride + head0 * hd;
    for (uint i = inv_id; i < nh * hd / 4u; i += WG)
        q_sh[i] = vec4(q[q_base + 4u * i], q[q_base + 4u * i + 1u], q[q_base + 4u * i + 2u], q[q_base + 4u * i + 3u]);
    barrier();

    float acc[MAX_HEADS * MAX_DIMS];
    [[unroll]] for (uint i = 0u; i < MAX_HEADS * MAX_DIMS; ++i) acc[i] = 0.0;
    float run_max = -1.0 / 0.0;  // of head `team` (teams below nh)
    float run_sum = 0.0;
    for (uint j0 = begin; j0 < end; j0 += TILE) {
        [[unroll]] for (uint rr = 0u; rr < TILE / TEAMS; ++rr) {
            const uint r = team + TEAMS * rr;
            const uint j = j0 + r;
            float d[MAX_HEADS];
            [[unroll]] for (uint h = 0u; h < MAX_HEADS; ++h) d[h] = 0.0;
            if (j < end) {
                const uint krow = p.k_off + j * p.k_stride;
                // STEPS loads in flight before their products: a decode step runs few work groups, which hide
                // little latency. (Unrolling a whole row costs lavapipe's compiler minutes.)
                for (uint e0 = lane * 4u; e0 < hd; e0 += STEPS * TEAM * 4u) {
                    vec4 kv4[STEPS];
                    [[unroll]] for (uint u = 0u; u < STEPS; ++u) {
                        const uint e = e0 + TEAM * 4u * u;
                        kv4[u] = e < hd ? load_k4(krow, kv_col + e) : vec4(0.0);
                    }
                    [[unroll]] for (uint u = 0u; u < STEPS; ++u) {
                        const uint e = e0 + TEAM * 4u * u;
                        if (e < hd) {
                            [[unroll]] for (uint h = 0u; h < MAX_HEADS; ++h) {
                                if (h < nh) d[h] += dot(kv4[u], q_sh[(h * hd + e) / 4u]);
                            }
                        }
                    }
                }
            }
            const float score = team_transpose_sum(d, lane);
            if (lane < nh) w_sh[(lane * TILE + r) / 4u][r % 4u] = j < end ? score * p.scale : -1.0 / 0.0;
        }
        barrier();
        if (team < nh) {
            float m = -1.0 / 0.0;
            [[unroll]] for (uint k = 0u; k < TILE / TEAM; ++k) {
                const uint r = team * TILE + lane + TEAM * k;
                m = max(m, w_sh[r / 4u][r % 4u]);
            }
            const float new_max = max(run_max, team_max(m));  // finite: the tile has a visible row
            const float correction = exp(run_max - new_max);
            float s = 0.0;
            [[unroll]] for (uint k = 0u; k < TILE / TEAM; ++k) {
                const uint r = team * TILE + lane + TEAM * k;
                const float w = exp(w_sh[r / 4u][r % 4u] - new_max);
                w_sh[r / 4u][r % 4u] = w;
                s += w;
            }
            run_sum = run_sum * correction + team_sum(s);
            run_max = new_max;
            if (lane == 0u) corr_sh[team] = correction;
        }
        barrier();
        [[unroll]] for (uint h = 0u; h < MAX_HEADS; ++h) {
            if (h < nh) {
                const float c = corr_sh[h];
                [[unroll]] for (uint i = 0u; i < MAX_DIMS; ++i) acc[h * MAX_DIMS + i] *= c;
            }
        }
        // Eight rows at a time: their value loads in flight together, a head's weights in two shared loads.
        const uint n_rows = min(TILE, end - j0);
        for (uint r0 = 0u; r0 < n_rows; r0 += 8u) {
            vec4 lo[MAX_DIMS], hi[MAX_DIMS];  // rows r0..r0+3 and r0+4..r0+7
            [[unroll]] for (uint i = 0u; i < MAX_DIMS; ++i) {
                lo[i] = vec4(0.0);
                hi[i] = vec4(0.0);
            }
            [[unroll]] for (uint rr = 0u; rr < 8u; ++rr) {
                if (r0 + rr < n_rows) {
                    const uint vrow = p.v_off + (j0 + r0 + rr) * p.v_stride;
                    [[unroll]] for (uint i = 0u; i < MAX_DIMS; ++i) {
                        const uint dim = inv_id + WG * i;
                        if (dim < hd) {
                            const float x = LOAD_V(vrow, kv_col + dim);
                            if (rr < 4u) lo[i][rr] = x;
                            else hi[i][rr - 4u] = x;
                        }
                    }
                }
            }
            [[unroll]] for (uint h = 0u; h < MAX_HEADS; ++h) {
                if (h < nh) {
                    const vec4 w_lo = w_sh[(h * TILE + r0) / 4u], w_hi = w_sh[(h * TILE + r0) / 4u + 1u];
                    [[unroll]] for (uint i = 0u; i < MAX_DIMS; ++i)
                        acc[h * MAX_DIMS + i] += dot(w_lo, lo[i]) + dot(w_hi, hi[i]);
                }
            }
        }
        barrier();
    }

    if (team < nh && lane == 0u) {
        stat_sh[2u * team] = run_max;
        stat_sh[2u * team + 1u] = run_sum;
    }
    barrier();
    [[unroll]] for (uint h = 0u; h < MAX_HEADS; ++h) {
        if (h < nh) {
            const float sum = stat_sh[2u * h + 1u];
            if (p.n_chunks == 1u) {
                const float sink = p.has_sinks != 0u ? sinks[p.sinks_off + head0 + h] : 0.0;
                const float inv = attention_scale(stat_sh[2u * h], sum, p.has_sinks != 0u, sink);
                const uint o = p.out_off + t * p.out_stride + (head0 + h) * hd;
                [[unroll]] for (uint i = 0u; i < MAX_DIMS; ++i) {
                    const uint dim = inv_id + WG * i;
                    if (dim < hd) out_f[o + dim] = acc[h * MAX_DIMS + i] * inv;
                }
            } else {
                const uint base = ((t * p.n_head + head0 + h) * p.n_chunks + chunk) * (hd + 2u);
                [[unroll]] for (uint i = 0u; i < MAX_DIMS; ++i) {
                    const uint dim = inv_id + WG * i;
                    if (dim < hd) part[base + dim] = acc[h * MAX_DIMS + i];
                }
                if (inv_id == 0u) {
                    part[base + hd] = stat_sh[2u * h];
                    part[base + hd + 1u] = sum;
                }
            }
        }
    }
}
