// SPDX-License-Identifier: MIT
// How the kernels of kernels/hip are launched: launch_kernel enqueues one grid on the Launch's stream, as a
// programmatic dependent launch where the device has them (CUDA sm_90 and later), so that a grid's launch and its
// blocks' start overlap the end of the grid before it. Every kernel opens with gpu::join_prior_grid().
#pragma once

#include <cstddef>
#include <utility>

#include "gpu_device.cuh"
#include "kernels.h"

namespace ember::gpu_kernels {

template <typename... Params, typename... Args>
inline void launch_kernel(const Launch& l, void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared,
                          Args&&... args) {
#if defined(EMBER_GPU_CUDA)
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = shared;
    config.stream = l.stream;
    config.attrs = &attribute;
    config.numAttrs = l.dependent_launches ? 1 : 0;
    // A failed launch is left in the runtime's last error, which the step's check reports.
    static_cast<void>(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
#else
    kernel<<<grid, block, shared, l.stream>>>(std::forward<Args>(args)...);
#endif
}

}  // namespace ember::gpu_kernels
