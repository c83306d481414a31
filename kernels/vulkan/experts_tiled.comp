// SPDX-License-Identifier: MIT
// Prefill expert products with the slots grouped by expert (experts_group.comp): work group (x, y) takes 128 rows
// of the expert of tile y of the tile table and that tile's (up to) 32 slots, so each expert's matrix is read once
// per tile of its slots instead of once per slot. Like matmul_tiled.comp otherwise, with 128 rows and 4 x 4 sums
// per invocation: each step dequantizes a 128 x 32 slice of the weights and gathers a 32 x 32 slice of the slots'
// activation rows into shared memory. out[slot, r] = W_e[r, :] . x[per_slot ? slot : slot / k, :].
// The grid is sized for the most tiles there can be; work groups past the table's length end at once.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(binding = 0) readonly buffer Weights { uint W[]; };
layout(binding = 1) readonly buffer X { float x[]; };
layout(binding = 2) writeonly buffer Out { float out_f[]; };
layout(binding = 3) readonly buffer Groups { uint S[]; };
layout(push_constant) uniform Params {
    uint w_off;
    uint w_stride;
    uint x_off;
    uint x_stride;
    uint out_off;
    uint out_stride;
    uint cols;
    uint expert_rows;
    uint k;
    uint per_slot;
    uint offsets_off;
    uint tiles_off;
    uint list_off;
} p;
#include "dequant.glsl"

const uint BM = 128u, BN = 32u, BK = 32u;
shared float w_tile[BK][BM + 1u];
shared vec4 x_tile[BK][BN / 4u];  // slots 4j..4j+3 in x_tile[kk][j]
shared uint slot_of[BN];

void main() {
    const uint tile = gl_WorkGroupID.y;
    if (tile >= S[0]) return;  // the same for the whole work group
    const uint entry = S[p.tiles_off + tile];
    const uint e = entry >> 16;
    const uint first = S[p.offsets_off + e] + (entry & 0xffffu) * BN;
    const uint n = min(BN, S[p.offsets_off + e + 1u] - first);

    const uint tid = gl_LocalInvocationID.x;
    if (tid < BN) slot_of[tid] = tid < n ? S[p.list_off + first + tid] : 0u;
    barrier();

    const uint row0 = gl_WorkGroupID.x * BM;
    const uint w_base = p.w_off + e * p.expert_rows * p.w_stride;
    // This invocation's 4 rows, 32 apart (neighbouring invocations read neighbouring words of w_tile), and 4
    // slots, the same for 32 neighbouring invocations (one read of x_tile serves them all).
    const uint tr = tid % 32u;
    const uint ts = tid / 32u;
    vec4 acc[4] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));

    for (uint k0 = 0u; k0 < p.cols; k0 += BK) {
        // Four neighbouring weights of one row per invocation, so that their block's scale is decoded once.
        for (uint i = tid; i < BM * BK / 4u; i += 256u) {
            const uint rr = i / (BK / 4u), kq = 4u * (i % (BK / 4u));
            const uint r = row0 + rr, c = k0 + kq;
            const uint row = w_base + r * p.w_stride;
            const uint block = row + (c / QK) * BLOCK_BYTES;
            vec4 v = vec4(0.0);
            if (QK > 1u) {
                if (r < p.expert_rows) v = dq4(block, c % QK);  // cols is a multiple of QK
            } else {
                for (uint m = 0u; m < 4u; ++m)
                    if (r < p.expert_rows && c + m < p.cols) v[m] = dq_elem(row, c + m);
            }
            for (uint m = 0u; m < 4u; ++m) w_tile[kq + m][rr] = v[m];
        }
        for (uint i = tid; i < BN * BK; i += 256u) {
            const uint j = i % BN, kk = i / BN;
            const uint c = k0 + kk;
            const uint src = p.per_slot != 0u ? slot_of[j] : slot_of[j] / p.k;
            x_tile[kk][j / 4u][j % 4u] = (j < n && c < p.cols) ? x[p.x_off + src * p.x_stride + c] : 0.0;
        }
        barrier();
        // Most experts have fewer slots than a tile: invocations whose slots are all empty skip the products.
        if (4u * ts < n) {
            for (uint kk = 0u; kk < BK; ++kk) {
                const vec4 xs = x_tile[kk][ts];
                for (uint i = 0u; i < 4u; ++i) acc[i] += w_tile[kk][tr + 32u * i] * xs;
            }
        }
        barrier();
    }
    for (uint i = 0u; i < 4u; ++i) {
        const uint r = row0 + tr + 32u * i;
        if (r >= p.expert_rows) continue;
        for (uint j = 0u; j < 4u; ++j) {
            const uint t = 4u * ts + j;
            if (t < n) out_f[p.out_off + slot_of[t] * p.out_stride + r] = acc[i][j];
        }
    }
}
