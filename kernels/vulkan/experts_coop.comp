// SPDX-License-Identifier: MIT
// Prefill expert products on cooperative matrices (coopmat.glsl), with the slots grouped by expert
// (experts_group.comp) exactly as for experts_tiled.comp: work group (x, y) takes 128 rows of the expert of tile y
// of the tile table and that tile's (up to) 32 slots. 128 x 32 makes the 16 sub-tiles of 16 x 16 for 256
// invocations (8 subgroups of 32 on NVIDIA: two sub-tiles each) with the grouping's 32 slots a tile.
// out[slot, r] = W_e[r, :] . x[per_slot ? slot : slot / k, :]. The grid is sized for the most tiles there can be;
// work groups past the table's length end at once.
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

const uint BM = 128u, BN = 32u;
#include "coopmat.glsl"
shared uint slot_of[BN];

void main() {
    const uint tile = gl_WorkGroupID.y;
    if (tile >= S[0] || !coop_supported()) return;  // the same for the whole work group
    const uint entry = S[p.tiles_off + tile];
    const uint e = entry >> 16;
    const uint first = S[p.offsets_off + e] + (entry & 0xffffu) * BN;
    const uint n = min(BN, S[p.offsets_off + e + 1u] - first);

    const uint tid = gl_LocalInvocationID.x;
    if (tid < BN) slot_of[tid] = tid < n ? S[p.list_off + first + tid] : 0u;
    barrier();

    const uint row0 = gl_WorkGroupID.x * BM;
    const uint w_base = p.w_off + e * p.expert_rows * p.w_stride;
    ACC_MAT acc0 = ACC_MAT(0.0), acc1 = ACC_MAT(0.0), acc2 = ACC_MAT(0.0), acc3 = ACC_MAT(0.0);

    for (uint k0 = 0u; k0 < p.cols; k0 += BK) {
        // Four neighbouring weights of one row per invocation, so that their block's scale is decoded once.
        for (uint i = tid; i < BM * BK / 4u; i += 256u) {
            const uint rr = i / (BK / 4u), kq = 4u * (i % (BK / 4u));
            const uint r = row0 + rr, c = k0 + kq;
            const uint row = w_base + r * p.w_stride;
            const uint block = row + (c / QK) * BLOCK_BYTES;
            // Block types only (cols a multiple of QK): no column bound needed.
            const vec4 v = r < p.expert_rows ? dq4(block, c % QK) : vec4(0.0);
            for (uint m = 0u; m < 4u; ++m) coop_store_input(rr * KS + kq + m, v[m]);
        }
        for (uint i = tid; i < BN * BK; i += 256u) {
            const uint j = i / BK, kk = i % BK;
            const uint c = k0 + kk;
            const uint src = p.per_slot != 0u ? slot_of[j] : slot_of[j] / p.k;
            coop_store_activation(j * KS + kk, (j < n && c < p.cols) ? x[p.x_off + src * p.x_stride + c] : 0.0);
        }
        barrier();
        COOP_MULTIPLY(acc0, coop_sub_tile(0u))
        COOP_MULTIPLY(acc1, coop_sub_tile(1u))
        COOP_MULTIPLY(acc2, coop_sub_tile(2u))
        COOP_MULTIPLY(acc3, coop_sub_tile(3u))
        barrier();
    }
    float sums[OUT_PER_INVOCATION];
    COOP_RESULTS(sums)
    for (uint j = 0u; j < OUT_PER_INVOCATION; ++j) {
        const uint i = tid + 256u * j;
        const uint r = row0 + i % BM, t = i / BM;
        if (r < p.expert_rows && t < n) out_f[p.out_off + slot_of[t] * p.out_stride + r] = sums[j];
    }
}
