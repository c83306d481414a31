// SPDX-License-Identifier: MIT
// Groups the slots of an expert product by expert, on the GPU (the ids never go to the host), for
// experts_tiled.comp. Slot s = t * k + j has expert ids[t, j]; ids outside [0, n_experts) belong to no expert
// (their output rows are left as they are, as the matrix x vector kernels do). Scratch S (words):
//   S[0]                          how many tiles of BN slots the experts have together
//   S[offsets_off + e], e <= E    where expert e's slots start in the list (S[offsets_off + E]: all grouped slots)
//   S[tiles_off + i]              tile i: expert << 16 | tile index within that expert
//   S[list_off + ...]             the slots, grouped by expert, ascending within an expert
// Phase 0 (one work group): counts per expert, their prefix sums and the tile table. Phase 1 (one work group per
// 256 slots): each slot's place, its expert's start plus how many earlier slots have the same expert (counted,
// not taken from atomics, so the order is the same on every run).
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(binding = 0) readonly buffer Ids { int ids[]; };
layout(binding = 1) buffer Scratch { uint S[]; };
layout(push_constant) uniform Params {
    uint ids_off;
    uint ids_stride;
    uint k;
    uint slots;
    uint n_experts;
    uint phase;
    uint offsets_off;
    uint tiles_off;
    uint list_off;
    uint tile_slots;  // BN of experts_tiled.comp
} p;

int expert_of(uint s) {
    const int e = ids[p.ids_off + (s / p.k) * p.ids_stride + s % p.k];
    return e >= 0 && uint(e) < p.n_experts ? e : -1;
}

shared uint counts[1024];
shared uint slot_sums[256];
shared uint tile_sums[256];
shared int chunk[256];

void count_and_scan(uint tid) {
    for (uint e = tid; e < p.n_experts; e += 256u) counts[e] = 0u;
    barrier();
    for (uint s = tid; s < p.slots; s += 256u) {
        const int e = expert_of(s);
        if (e >= 0) atomicAdd(counts[e], 1u);
    }
    barrier();
    // Invocation tid owns experts [tid * per, tid * per + per).
    const uint per = (p.n_experts + 255u) / 256u;
    uint own_slots = 0u, own_tiles = 0u;
    for (uint i = 0u; i < per; ++i) {
        const uint e = tid * per + i;
        if (e < p.n_experts) {
            own_slots += counts[e];
            own_tiles += (counts[e] + p.tile_slots - 1u) / p.tile_slots;
        }
    }
    slot_sums[tid] = own_slots;
    tile_sums[tid] = own_tiles;
    barrier();
    for (uint step = 1u; step < 256u; step <<= 1) {  // inclusive prefix sums
        const uint a = tid >= step ? slot_sums[tid - step] : 0u;
        const uint b = tid >= step ? tile_sums[tid - step] : 0u;
        barrier();
        slot_sums[tid] += a;
        tile_sums[tid] += b;
        barrier();
    }
    uint slot_at = slot_sums[tid] - own_slots, tile_at = tile_sums[tid] - own_tiles;
    for (uint i = 0u; i < per; ++i) {
        const uint e = tid * per + i;
        if (e >= p.n_experts) break;
        S[p.offsets_off + e] = slot_at;
        const uint n_tiles = (counts[e] + p.tile_slots - 1u) / p.tile_slots;
        for (uint t = 0u; t < n_tiles; ++t) S[p.tiles_off + tile_at + t] = (e << 16) | t;
        slot_at += counts[e];
        tile_at += n_tiles;
    }
    if (tid == 255u) {
        S[p.offsets_off + p.n_experts] = slot_sums[255];
        S[0] = tile_sums[255];
    }
}

void place(uint tid) {
    const uint first = gl_WorkGroupID.x * 256u;
    const uint s = first + tid;
    const int e = s < p.slots ? expert_of(s) : -1;
    uint rank = 0u;
    for (uint c0 = 0u; c0 <= first; c0 += 256u) {
        chunk[tid] = c0 + tid < p.slots ? expert_of(c0 + tid) : -1;
        barrier();
        const uint n = c0 == first ? tid : 256u;
        for (uint j = 0u; j < n; ++j) rank += chunk[j] == e ? 1u : 0u;
        barrier();
    }
    if (e >= 0) S[p.list_off + S[p.offsets_off + uint(e)] + rank] = s;
}

void main() {
    if (p.phase == 0u)
        count_and_scan(gl_LocalInvocationID.x);
    else
        place(gl_LocalInvocationID.x);
}
