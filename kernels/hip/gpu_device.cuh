// SPDX-License-Identifier: MIT
// Device-side portability for the kernels of kernels/hip: the warp (wavefront) size as a compile-time constant,
// warp reductions, the 4 x int8 dot product, the byte permute used for codebook lookups, unaligned word loads and
// 16-bit float conversions, each mapped to the vendor's intrinsic with a portable fallback. Kernels include only
// this file and use nothing vendor-specific themselves.
#pragma once

#include <cstdint>

#if defined(EMBER_GPU_CUDA)
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#elif defined(EMBER_GPU_HIP)
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>
#else
#error "gpu_device.cuh needs EMBER_GPU_CUDA or EMBER_GPU_HIP"
#endif

namespace ember::gpu {

// 32 on NVIDIA and RDNA (wave32, hipcc's default there), 64 on CDNA/GCN. The AMD device compiler tells each
// target's pass its own wavefront size; EMBER_WARP_SIZE overrides (e.g. -mwavefrontsize64 builds).
#if defined(EMBER_WARP_SIZE)
inline constexpr int kWarpSize = EMBER_WARP_SIZE;
#elif defined(__AMDGCN_WAVEFRONT_SIZE)
inline constexpr int kWarpSize = __AMDGCN_WAVEFRONT_SIZE;
#else
inline constexpr int kWarpSize = 32;
#endif

// Programmatic dependent launch (launch_kernel): a grid may start while the grid before it on the stream still
// runs. Every kernel calls this first, before it reads or writes anything and before any early return, so that it
// sees the previous grid's writes and never ends before that grid does; then the grid after it may launch.
__device__ __forceinline__ void join_prior_grid() {
#if defined(EMBER_GPU_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Asks the bytes of [p, p + n) into L2 without waiting for them (one bulk prefetch on sm_90 and later, nothing
// elsewhere); only whole 16-byte units inside the range, so that nothing past it is touched.
__device__ __forceinline__ void prefetch_l2(const void* p, size_t n) {
#if defined(EMBER_GPU_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const uintptr_t a = reinterpret_cast<uintptr_t>(p), begin = (a + 15) & ~uintptr_t{15}, end = (a + n) & ~uintptr_t{15};
    if (end > begin)
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(begin), "r"(static_cast<uint32_t>(end - begin))
                     : "memory");
#else
    static_cast<void>(p);
    static_cast<void>(n);
#endif
}

__device__ __forceinline__ float shuffle_xor(float v, int mask) {
#if defined(EMBER_GPU_CUDA)
    return __shfl_xor_sync(0xffffffffu, v, mask, kWarpSize);
#else
    return __shfl_xor(v, mask, kWarpSize);
#endif
}

// Lane src's value (the same src in every lane), and the value of the lane delta below (a lane's own below delta).
__device__ __forceinline__ float shuffle(float v, int src) {
#if defined(EMBER_GPU_CUDA)
    return __shfl_sync(0xffffffffu, v, src, kWarpSize);
#else
    return __shfl(v, src, kWarpSize);
#endif
}

__device__ __forceinline__ int shuffle_up(int v, int delta) {
#if defined(EMBER_GPU_CUDA)
    return __shfl_up_sync(0xffffffffu, v, static_cast<unsigned>(delta), kWarpSize);
#else
    return __shfl_up(v, static_cast<unsigned>(delta), kWarpSize);
#endif
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int m = kWarpSize / 2; m > 0; m >>= 1) v += shuffle_xor(v, m);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int m = kWarpSize / 2; m > 0; m >>= 1) v = fmaxf(v, shuffle_xor(v, m));
    return v;
}

// Sum of the four int8 x int8 products of a and b, plus c.
__device__ __forceinline__ int dot4_i8(int a, int b, int c) {
#if defined(EMBER_GPU_CUDA) && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 610)
    return __dp4a(a, b, c);
#elif defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__) || \
    defined(__gfx1150__) || defined(__gfx1151__) || defined(__gfx1152__) || defined(__gfx1200__) ||   \
    defined(__gfx1201__)
    return __builtin_amdgcn_sudot4(true, a, true, b, c, false);  // RDNA3/4: v_dot4_i32_iu8
#elif defined(__gfx906__) || defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx940__) ||     \
    defined(__gfx941__) || defined(__gfx942__) || defined(__gfx1011__) || defined(__gfx1012__) ||     \
    defined(__gfx1030__) || defined(__gfx1031__) || defined(__gfx1032__) || defined(__gfx1033__) ||   \
    defined(__gfx1034__) || defined(__gfx1035__) || defined(__gfx1036__)
    return __builtin_amdgcn_sdot4(a, b, c, false);  // v_dot4_i32_i8
#else
    const auto byte = [](int v, int i) { return static_cast<int>(static_cast<int8_t>(v >> (8 * i))); };
    return c + byte(a, 0) * byte(b, 0) + byte(a, 1) * byte(b, 1) + byte(a, 2) * byte(b, 2) + byte(a, 3) * byte(b, 3);
#endif
}

// Table lookup of four 3-bit indices at once: byte i of the result is byte (idx >> 8i & 7) of the 8-byte table
// {lo, hi} (lo holds entries 0-3). Every byte of idx must be in 0..7.
__device__ __forceinline__ uint32_t lookup8(uint32_t lo, uint32_t hi, uint32_t idx) {
#if defined(EMBER_GPU_CUDA)
    // __byte_perm takes one selector nibble per result byte.
    const uint32_t sel = (idx & 0x7u) | ((idx >> 4) & 0x70u) | ((idx >> 8) & 0x700u) | ((idx >> 12) & 0x7000u);
    return __byte_perm(lo, hi, sel);
#elif defined(__HIP_DEVICE_COMPILE__) && defined(__AMDGCN__)
    return __builtin_amdgcn_perm(hi, lo, idx);  // v_perm_b32: selector bytes 0-3 pick from lo, 4-7 from hi
#else
    const uint64_t table = (static_cast<uint64_t>(hi) << 32) | lo;
    uint32_t out = 0;
    for (int i = 0; i < 4; ++i) out |= static_cast<uint32_t>((table >> (8 * ((idx >> (8 * i)) & 7))) & 0xff) << (8 * i);
    return out;
#endif
}

// Per byte: a where the byte of mask is 0xff, b where it is 0.
__device__ __forceinline__ uint32_t select_bytes(uint32_t mask, uint32_t a, uint32_t b) {
    return (a & mask) | (b & ~mask);
}

// The NBYTES bytes at any address p as little-endian 32-bit words (the tail of the last word is unspecified),
// read with aligned loads only: blocks of 17, 18 or 34 bytes are not word aligned, and NVIDIA faults on unaligned
// words. Only words holding at least one of the bytes are read, so nothing past the block's last word is touched.
// In two parts where the loads should be in flight before the bytes are needed: fetch_unaligned issues the loads,
// align_unaligned shifts the words into place.
template <int NBYTES>
struct UnalignedWords {
    uint32_t w[(NBYTES + 3) / 4 + 1];
    unsigned skew;
};

template <int NBYTES>
__device__ __forceinline__ void fetch_unaligned(const uint8_t* p, UnalignedWords<NBYTES>& u) {
    constexpr int kWords = (NBYTES + 3) / 4;
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    const uint32_t* base = reinterpret_cast<const uint32_t*>(a & ~uintptr_t{3});
    u.skew = static_cast<unsigned>(a & 3);
#pragma unroll
    for (int i = 0; i < kWords; ++i) u.w[i] = base[i];
    u.w[kWords] = 4 * kWords < static_cast<int>(u.skew) + NBYTES ? base[kWords] : 0u;
}

template <int NBYTES>
__device__ __forceinline__ void align_unaligned(const UnalignedWords<NBYTES>& u, uint32_t (&out)[(NBYTES + 3) / 4]) {
#pragma unroll
    for (int i = 0; i < (NBYTES + 3) / 4; ++i)
        out[i] = static_cast<uint32_t>(((static_cast<uint64_t>(u.w[i + 1]) << 32) | u.w[i]) >> (8 * u.skew));
}

template <int NBYTES>
__device__ __forceinline__ void load_unaligned(const uint8_t* p, uint32_t (&out)[(NBYTES + 3) / 4]) {
    UnalignedWords<NBYTES> u;
    fetch_unaligned<NBYTES>(p, u);
    align_unaligned<NBYTES>(u, out);
}

__device__ __forceinline__ uint16_t load_u16(const uint8_t* p) {
    return static_cast<uint16_t>(p[0] | (static_cast<uint16_t>(p[1]) << 8));
}

__device__ __forceinline__ float half_to_float(uint16_t h) { return __half2float(__ushort_as_half(h)); }
// An fp16 scale into a quant block at p, which must be 2-byte aligned (Q8_0 blocks are 34 bytes in rows of whole
// blocks). One 16-bit store: written as two byte stores (p[0] = h & 0xff, p[1] = h >> 8), the low byte came back 0
// on the H200 (nvcc 13, sm_90) while the high byte and the quants were right.
__device__ __forceinline__ void store_half_scale(uint8_t* p, uint16_t h) { *reinterpret_cast<uint16_t*>(p) = h; }
__device__ __forceinline__ uint16_t float_to_half(float f) { return __half_as_ushort(__float2half_rn(f)); }
__device__ __forceinline__ float bf16_to_float(uint16_t h) { return __uint_as_float(static_cast<uint32_t>(h) << 16); }
// Round to nearest even; NaN stays a quiet NaN (as quant::fp32_to_bf16).
__device__ __forceinline__ uint16_t float_to_bf16(float f) {
    const uint32_t x = __float_as_uint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
    return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace ember::gpu
