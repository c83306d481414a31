// SPDX-License-Identifier: MIT
// The host runtime API of the HIP/CUDA backend, one spelling for both vendors. Kernel files and the host backend
// (engine/backend/gpu) call ember::gpu::* instead of hip* or cuda*; which runtime is behind it is decided by the
// build: EMBER_GPU_CUDA (nvcc, CUDA runtime) or EMBER_GPU_HIP (hipcc, HIP runtime). Only the calls Ember uses are
// mapped; the few whose signatures differ between the vendors get a small inline wrapper.
#pragma once

#include <cstddef>

#if defined(EMBER_GPU_CUDA)
#include <cuda_runtime_api.h>
#elif defined(EMBER_GPU_HIP)
#include <hip/hip_runtime_api.h>
#else
#error "gpu_runtime.h needs EMBER_GPU_CUDA or EMBER_GPU_HIP"
#endif

namespace ember::gpu {

#if defined(EMBER_GPU_CUDA)
inline constexpr const char* kRuntimeName = "cuda";
using Error = cudaError_t;
using Stream = cudaStream_t;
using Event = cudaEvent_t;
using Graph = cudaGraph_t;
using GraphExec = cudaGraphExec_t;
using DeviceProp = cudaDeviceProp;
inline constexpr Error kSuccess = cudaSuccess;
inline constexpr auto kHostToDevice = cudaMemcpyHostToDevice;
inline constexpr auto kDeviceToHost = cudaMemcpyDeviceToHost;
inline constexpr auto kDeviceToDevice = cudaMemcpyDeviceToDevice;

inline const char* error_string(Error e) { return cudaGetErrorString(e); }
inline Error get_last_error() { return cudaGetLastError(); }
inline Error device_count(int* n) { return cudaGetDeviceCount(n); }
inline Error set_device(int d) { return cudaSetDevice(d); }
inline Error device_properties(DeviceProp* p, int d) { return cudaGetDeviceProperties(p, d); }
inline Error mem_info(size_t* free_bytes, size_t* total) { return cudaMemGetInfo(free_bytes, total); }
inline Error malloc_device(void** p, size_t n) { return cudaMalloc(p, n); }
inline Error free_device(void* p) { return cudaFree(p); }
inline Error malloc_pinned(void** p, size_t n) { return cudaMallocHost(p, n); }
inline Error free_pinned(void* p) { return cudaFreeHost(p); }
// Host memory made readable by the device in place (the file mapping on a unified-memory machine).
inline Error host_register_read_only(void* p, size_t n) {
    return cudaHostRegister(p, n, cudaHostRegisterMapped | cudaHostRegisterReadOnly);
}
inline Error host_unregister(void* p) { return cudaHostUnregister(p); }
inline Error host_device_pointer(void** device, void* host) { return cudaHostGetDevicePointer(device, host, 0); }
inline Error memcpy_sync(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
    return cudaMemcpy(dst, src, n, kind);
}
inline Error memcpy_async(void* dst, const void* src, size_t n, cudaMemcpyKind kind, Stream s) {
    return cudaMemcpyAsync(dst, src, n, kind, s);
}
inline Error memset_async(void* p, int value, size_t n, Stream s) { return cudaMemsetAsync(p, value, n, s); }
inline Error stream_create(Stream* s) { return cudaStreamCreateWithFlags(s, cudaStreamNonBlocking); }
inline Error stream_destroy(Stream s) { return cudaStreamDestroy(s); }
inline Error stream_synchronize(Stream s) { return cudaStreamSynchronize(s); }
inline Error event_create(Event* e) { return cudaEventCreateWithFlags(e, cudaEventDisableTiming); }
inline Error event_create_timed(Event* e) { return cudaEventCreate(e); }
inline Error event_destroy(Event e) { return cudaEventDestroy(e); }
inline Error event_record(Event e, Stream s) { return cudaEventRecord(e, s); }
inline Error event_synchronize(Event e) { return cudaEventSynchronize(e); }
inline Error event_elapsed_ms(float* ms, Event a, Event b) { return cudaEventElapsedTime(ms, a, b); }
inline Error begin_capture(Stream s) { return cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal); }
inline Error end_capture(Stream s, Graph* g) { return cudaStreamEndCapture(s, g); }
inline Error graph_instantiate(GraphExec* exec, Graph g) { return cudaGraphInstantiate(exec, g, 0); }
inline Error graph_launch(GraphExec exec, Stream s) { return cudaGraphLaunch(exec, s); }
inline Error graph_destroy(Graph g) { return cudaGraphDestroy(g); }
inline Error graph_exec_destroy(GraphExec e) { return cudaGraphExecDestroy(e); }
// "sm_90" style name of the architecture.
inline void arch_name(const DeviceProp& p, char* out, size_t n) {
    if (n < 8) return;
    const int major = p.major % 100, minor = p.minor % 10;
    out[0] = 's';
    out[1] = 'm';
    out[2] = '_';
    int i = 3;
    if (major >= 10) out[i++] = static_cast<char>('0' + major / 10);
    out[i++] = static_cast<char>('0' + major % 10);
    out[i++] = static_cast<char>('0' + minor);
    out[i] = '\0';
}
// Whether kernels may read ordinary (pageable) host memory, such as a file mapping, without registering it.
inline bool reads_pageable_memory(const DeviceProp& p) { return p.pageableMemoryAccess != 0; }
// Tensor cores with mma.sync on f16 (sm_80 and later: the kernels' mma path).
inline bool has_matrix_cores(const DeviceProp& p) {
    return p.major >= 8;
}
inline bool has_dependent_launches(const DeviceProp& p) {
    return p.major >= 9;
}
// The PTX version a kernel's code was built from (75 for code JIT-compiled from compute_75 PTX), 0 on failure.
inline int kernel_ptx_version(const void* kernel) {
    cudaFuncAttributes a{};
    if (cudaFuncGetAttributes(&a, kernel) != cudaSuccess) {
        static_cast<void>(cudaGetLastError());
        return 0;
    }
    return a.ptxVersion;
}

#else  // EMBER_GPU_HIP
inline constexpr const char* kRuntimeName = "hip";
using Error = hipError_t;
using Stream = hipStream_t;
using Event = hipEvent_t;
using Graph = hipGraph_t;
using GraphExec = hipGraphExec_t;
using DeviceProp = hipDeviceProp_t;
inline constexpr Error kSuccess = hipSuccess;
inline constexpr auto kHostToDevice = hipMemcpyHostToDevice;
inline constexpr auto kDeviceToHost = hipMemcpyDeviceToHost;
inline constexpr auto kDeviceToDevice = hipMemcpyDeviceToDevice;

inline const char* error_string(Error e) { return hipGetErrorString(e); }
inline Error get_last_error() { return hipGetLastError(); }
inline Error device_count(int* n) { return hipGetDeviceCount(n); }
inline Error set_device(int d) { return hipSetDevice(d); }
inline Error device_properties(DeviceProp* p, int d) { return hipGetDeviceProperties(p, d); }
inline Error mem_info(size_t* free_bytes, size_t* total) { return hipMemGetInfo(free_bytes, total); }
inline Error malloc_device(void** p, size_t n) { return hipMalloc(p, n); }
inline Error free_device(void* p) { return hipFree(p); }
inline Error malloc_pinned(void** p, size_t n) { return hipHostMalloc(p, n, hipHostMallocDefault); }
inline Error free_pinned(void* p) { return hipHostFree(p); }
inline Error host_register_read_only(void* p, size_t n) {
#ifdef hipHostRegisterReadOnly
    return hipHostRegister(p, n, hipHostRegisterMapped | hipHostRegisterReadOnly);
#else
    return hipHostRegister(p, n, hipHostRegisterMapped);  // ROCm before 6: no read-only flag
#endif
}
inline Error host_unregister(void* p) { return hipHostUnregister(p); }
inline Error host_device_pointer(void** device, void* host) { return hipHostGetDevicePointer(device, host, 0); }
inline Error memcpy_sync(void* dst, const void* src, size_t n, hipMemcpyKind kind) {
    return hipMemcpy(dst, src, n, kind);
}
inline Error memcpy_async(void* dst, const void* src, size_t n, hipMemcpyKind kind, Stream s) {
    return hipMemcpyAsync(dst, src, n, kind, s);
}
inline Error memset_async(void* p, int value, size_t n, Stream s) { return hipMemsetAsync(p, value, n, s); }
inline Error stream_create(Stream* s) { return hipStreamCreateWithFlags(s, hipStreamNonBlocking); }
inline Error stream_destroy(Stream s) { return hipStreamDestroy(s); }
inline Error stream_synchronize(Stream s) { return hipStreamSynchronize(s); }
inline Error event_create(Event* e) { return hipEventCreateWithFlags(e, hipEventDisableTiming); }
inline Error event_create_timed(Event* e) { return hipEventCreate(e); }
inline Error event_destroy(Event e) { return hipEventDestroy(e); }
inline Error event_record(Event e, Stream s) { return hipEventRecord(e, s); }
inline Error event_synchronize(Event e) { return hipEventSynchronize(e); }
inline Error event_elapsed_ms(float* ms, Event a, Event b) { return hipEventElapsedTime(ms, a, b); }
inline Error begin_capture(Stream s) { return hipStreamBeginCapture(s, hipStreamCaptureModeThreadLocal); }
inline Error end_capture(Stream s, Graph* g) { return hipStreamEndCapture(s, g); }
inline Error graph_instantiate(GraphExec* exec, Graph g) { return hipGraphInstantiate(exec, g, nullptr, nullptr, 0); }
inline Error graph_launch(GraphExec exec, Stream s) { return hipGraphLaunch(exec, s); }
inline Error graph_destroy(Graph g) { return hipGraphDestroy(g); }
inline Error graph_exec_destroy(GraphExec e) { return hipGraphExecDestroy(e); }
// "gfx1151" (the part of gcnArchName before any ":sramecc+:xnack-" feature suffix).
inline void arch_name(const DeviceProp& p, char* out, size_t n) {
    size_t i = 0;
    for (; i + 1 < n && p.gcnArchName[i] && p.gcnArchName[i] != ':'; ++i) out[i] = p.gcnArchName[i];
    if (n) out[i] = '\0';
}
inline bool reads_pageable_memory(const DeviceProp& p) { return p.pageableMemoryAccess != 0; }
// RDNA3 WMMA: not written (no Debian 12 toolchain compiles gfx11 device code; see the README).
inline bool has_matrix_cores(const DeviceProp&) {
    return false;
}
inline bool has_dependent_launches(const DeviceProp&) {
    return false;
}
#endif

}  // namespace ember::gpu
