// SPDX-License-Identifier: MIT
// Row gathers and type conversion: get_rows decodes table rows bit-exactly (decode32), convert_rows re-encodes
// F32/F16/BF16/Q8_0 rows exactly as quant::quantize_row does.
#include "kernel_launch.cuh"
#include "quant_blocks.cuh"

namespace ember::gpu_kernels {

namespace {

// One thread per 32 elements.
template <int T>
__global__ void get_rows_kernel(const uint8_t* table, size_t row_stride, int64_t cols, const int32_t* ids,
                                int64_t n, float* out, int64_t os) {
    gpu::join_prior_grid();
    const int64_t chunks = (cols + 31) / 32;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n * chunks) return;
    const int64_t r = i / chunks, c = i % chunks;
    const uint8_t* row = table + static_cast<size_t>(ids[r]) * row_stride;
    float* o = out + r * os + 32 * c;
    const int count = cols - 32 * c < 32 ? static_cast<int>(cols - 32 * c) : 32;
    if (count == 32) {
        float v[32];
        decode32<T>(row, c, v);
#pragma unroll
        for (int j = 0; j < 32; ++j) o[j] = v[j];
    } else if constexpr (T == kF32 || T == kF16 || T == kBF16) {  // only float types end mid-chunk
        for (int j = 0; j < count; ++j) {
            const int64_t e = 32 * c + j;
            o[j] = T == kF32   ? reinterpret_cast<const float*>(row)[e]
                   : T == kF16 ? half_to_float(reinterpret_cast<const uint16_t*>(row)[e])
                               : gpu::bf16_to_float(reinterpret_cast<const uint16_t*>(row)[e]);
        }
    }
}

__device__ float load_float_element(uint32_t type, const uint8_t* row, int64_t e) {
    if (type == kF32) return reinterpret_cast<const float*>(row)[e];
    const uint16_t h = reinterpret_cast<const uint16_t*>(row)[e];
    return type == kF16 ? half_to_float(h) : gpu::bf16_to_float(h);
}

__device__ void store_float_element(uint32_t type, uint8_t* row, int64_t e, float v) {
    if (type == kF32)
        reinterpret_cast<float*>(row)[e] = v;
    else
        reinterpret_cast<uint16_t*>(row)[e] = type == kF16 ? gpu::float_to_half(v) : gpu::float_to_bf16(v);
}

// Float types to float types, one thread per element.
__global__ void convert_float_kernel(TypedRows src, TypedRows dst) {
    gpu::join_prior_grid();
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= src.rows * src.cols) return;
    const int64_t r = i / src.cols, c = i % src.cols;
    store_float_element(dst.type, dst.data + r * dst.row_stride, c,
                        load_float_element(src.type, src.data + r * src.row_stride, c));
}

// Q8_0 on either side: one thread per 32 elements.
template <int ST>
__global__ void convert_blocks_kernel(TypedRows src, TypedRows dst) {
    gpu::join_prior_grid();
    const int64_t chunks = src.cols / 32;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= src.rows * chunks) return;
    const int64_t r = i / chunks, c = i % chunks;
    float v[32];
    decode32<ST>(src.data + r * src.row_stride, c, v);
    uint8_t* row = dst.data + r * dst.row_stride;
    if (dst.type != kQ8_0) {
        for (int j = 0; j < 32; ++j) store_float_element(dst.type, row, 32 * c + j, v[j]);
        return;
    }
    encode_q8_0_block(v, row + 34 * c);
}

}  // namespace

void get_rows(const Launch& l, const Weights& table, const int32_t* ids, const Rows& out) {
    const int64_t n = out.rows * ((table.cols + 31) / 32);
    if (n == 0) return;
    dispatch_weight_type(table.type, [&]<int T>() {
        launch_kernel(l, get_rows_kernel<T>, static_cast<unsigned>((n + 127) / 128), 128, 0, table.data,
                      table.row_stride, table.cols, ids, out.rows, out.data, out.stride);
    });
}

void convert_rows(const Launch& l, const TypedRows& src, const TypedRows& dst) {
    if (src.type != kQ8_0 && dst.type != kQ8_0) {
        const int64_t n = src.rows * src.cols;
        if (n) launch_kernel(l, convert_float_kernel, static_cast<unsigned>((n + 255) / 256), 256, 0, src, dst);
        return;
    }
    const int64_t n = src.rows * (src.cols / 32);
    if (n == 0) return;
    const unsigned grid = static_cast<unsigned>((n + 127) / 128);
    switch (src.type) {
        case kF32:
            launch_kernel(l, convert_blocks_kernel<kF32>, grid, 128, 0, src, dst);
            break;
        case kF16:
            launch_kernel(l, convert_blocks_kernel<kF16>, grid, 128, 0, src, dst);
            break;
        case kBF16:
            launch_kernel(l, convert_blocks_kernel<kBF16>, grid, 128, 0, src, dst);
            break;
        default:
            launch_kernel(l, convert_blocks_kernel<kQ8_0>, grid, 128, 0, src, dst);
            break;
    }
}

}  // namespace ember::gpu_kernels
