// SPDX-License-Identifier: MIT
// The token tile of one block of the tiled products (matmul_tiled.cu, matmul_mma.cu) and of the grouped expert mat x
// vec (matvec.cu): dense or grouped by expert.
#pragma once

#include <cstdint>

#include "gpu_device.cuh"
#include "kernels.h"

namespace ember::gpu_kernels {

// The slots of an expert product grouped by expert on the device (matmul_tiled.cu's group_slots_kernel), cut into
// tiles of at most BN slots of one expert. Each tile is one block's work, so that an expert with many slots is
// spread over many blocks.
struct ExpertGroups {
    const int32_t* offsets = nullptr;     // [n_experts + 1]: expert e's slots are list[offsets[e] .. offsets[e + 1])
    const int32_t* list = nullptr;        // slot indices sorted by expert
    const int32_t* tiles = nullptr;       // per tile: its expert, then the index in list of its first slot
    const int32_t* tile_count = nullptr;  // the number of tiles
};

// The slots of one tile of the grouped expert mat x vec (matvec.cu): the smallest tile of all grouped products, which
// sizes expert_group_bytes.
inline constexpr int kMatvecExpertTileSlots = 8;

// Groups the slots of ids ([slots], an expert each) by expert on the stream, into the scratch laid out for
// expert_group_bytes, in tiles of at most tile_slots (>= kMatvecExpertTileSlots); the output rows of slots whose
// expert is outside [0, n_experts) are zeroed there.
ExpertGroups group_expert_slots(const Launch& l, const int32_t* ids, int64_t slots, int64_t n_experts, int tile_slots,
                                void* scratch, const Rows& out);

// An upper bound of the tile count that the host knows (the grids' height): every expert that has slots ends with
// at most one partial tile.
__host__ __device__ constexpr int64_t max_expert_tiles(int64_t slots, int64_t n_experts, int64_t tile_slots) {
    return (slots + tile_slots - 1) / tile_slots + (slots < n_experts ? slots : n_experts);
}

// This block's tokens in shared memory: x_row[i] and out_row[i] are the activation and output rows of its token
// i < BN, -1 past its last token. Dense (groups.list null): tokens blockIdx.y * BN on; grouped: tile blockIdx.y.
// Returns the block's token count, 0 for a block past the tile count (the same for all threads of a block);
// expert: the tile's expert, 0 when dense. Needs at least BN threads.
template <int BN>
__device__ __forceinline__ int load_token_tile(const ExpertGroups& groups, int64_t tokens, bool x_per_slot, int k,
                                               int64_t (&x_row)[BN], int64_t (&out_row)[BN], int& expert) {
    int64_t first = 0, count = 0;
    expert = 0;
    if (groups.list) {
        const int tile = static_cast<int>(blockIdx.y);
        if (tile >= *groups.tile_count) return 0;
        expert = groups.tiles[2 * tile];
        first = groups.tiles[2 * tile + 1];
        count = groups.offsets[expert + 1] - first;
    } else {
        first = static_cast<int64_t>(blockIdx.y) * BN;
        count = tokens - first;
    }
    const int n = static_cast<int>(count < BN ? count : BN);
    const int tid = static_cast<int>(threadIdx.x);
    if (tid < BN) {
        if (tid < n) {
            const int64_t s = groups.list ? groups.list[first + tid] : first + tid;
            x_row[tid] = groups.list && !x_per_slot ? s / k : s;
            out_row[tid] = s;
        } else {
            x_row[tid] = -1;
            out_row[tid] = -1;
        }
    }
    return n;
}

}  // namespace ember::gpu_kernels
