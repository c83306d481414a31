// SPDX-License-Identifier: MIT
// Kernels that end with a small step over every block's output (a router's route, a residual norm): the last block
// of the launch to finish takes it, found with a counter of finished blocks that it resets for the next launch.
#pragma once

#include "gpu_device.cuh"

namespace ember::gpu_kernels {

// Called by every thread of every block once its outputs are written; true in the threads of the launch's last
// block, which then sees every other block's writes (read them through volatile pointers) and must call
// release_tail_counter when done. counter: a device word that is 0 between launches.
__device__ __forceinline__ bool last_block_of_launch(unsigned* counter) {
    __shared__ bool last;
    __syncthreads();  // every output of this block is written
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(counter, 1u) == gridDim.x * gridDim.y * gridDim.z - 1;
    }
    __syncthreads();
    if (last) __threadfence();
    return last;
}

__device__ __forceinline__ void release_tail_counter(unsigned* counter) {
    if (threadIdx.x == 0) *counter = 0;
}

}  // namespace ember::gpu_kernels
