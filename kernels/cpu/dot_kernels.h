// SPDX-License-Identifier: MIT
// The kernel tables behind cpu_kernels.h. A tile kernel computes the dot products of one weight row with up to
// kMaxTile activation rows, so that matmul decodes each weight block once per tile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

#include "cpu/cpu_kernels.h"
#include "quant/quant.h"

namespace ember::cpu::detail {

// The names the kernel files and their tables use for block layouts and tensor types.
namespace block = quant::block;
using TT = gguf::TensorType;

// 8: every tile kernel decodes a weight block once for up to 8 activation rows (Gemma 3 270M Q4_K_M prefill 434 ->
// 478 tok/s, mid STRIX 102 -> 114 at 2 threads on the 2-core development machine).
constexpr int kMaxTile = 8;

// out[t] = dot(w_row, act + t * act_stride) for t < n_act (1..kMaxTile); act rows are activation_row_bytes rows.
using DotTileFn = void (*)(const void* w_row, const std::byte* act, size_t act_stride, int n_act, int64_t cols,
                           float* out);

struct Kernel {
    gguf::TensorType type;
    Isa isa;  // the table the entry lives in, counted when it runs
    DotTileFn tile;
};

// The entry of `table` for `type`; nullptr when it has none.
inline const Kernel* find_kernel(std::span<const Kernel> table, gguf::TensorType type) {
    for (const Kernel& k : table)
        if (k.type == type) return &k;
    return nullptr;
}

// Calls run(std::integral_constant<int, T>{}) with T = n_act (1..kMaxTile), for the tile kernels that keep one
// accumulator per activation row as a compile-time array.
template <typename Run>
void with_tile_width(int n_act, Run&& run) {
    switch (n_act) {
        case 1: run(std::integral_constant<int, 1>{}); break;
        case 2: run(std::integral_constant<int, 2>{}); break;
        case 3: run(std::integral_constant<int, 3>{}); break;
        case 4: run(std::integral_constant<int, 4>{}); break;
        case 5: run(std::integral_constant<int, 5>{}); break;
        case 6: run(std::integral_constant<int, 6>{}); break;
        case 7: run(std::integral_constant<int, 7>{}); break;
        default: run(std::integral_constant<int, kMaxTile>{}); break;
    }
}

// Q8_0 activation rows (the 32-weight types') are followed by each block's scale as a float, so that a weight row's
// dot reads it instead of converting the fp16 scale again for every weight row; for the types with a block minimum
// (Q4_1, Q5_1) then by each block's sum as a float (d * the sum of its codes): the minimum's share of a dot is one
// multiply-add per block, not a sum over the block's 32 codes for every weight row.
inline bool carries_block_sums(gguf::TensorType weight) { return weight == TT::Q4_1 || weight == TT::Q5_1; }
// Bytes of one activation row for `weight`: activation_type(weight)'s row, plus the block scales and sums where
// carried.
size_t activation_row_bytes(gguf::TensorType weight, int64_t cols);
// Writes the block scales (and, with_sums, the block sums) after the Q8_0 blocks of a row of `cols` values.
void write_block_extras(std::byte* q8_0_row, int64_t cols, bool with_sums);
// The scale and the sum of block k of a row written by write_block_extras.
inline float block_scale(const std::byte* q8_0_row, int64_t cols, int64_t k) {
    float v;
    std::memcpy(&v, q8_0_row + static_cast<size_t>(cols / 32) * sizeof(quant::block::Q8_0) + 4 * static_cast<size_t>(k),
                sizeof v);
    return v;
}
inline float block_sum(const std::byte* q8_0_row, int64_t cols, int64_t k) {
    return block_scale(q8_0_row, cols, cols / 32 + k);
}

// nullptr when the table has no kernel for the type.
const Kernel* scalar_kernel(gguf::TensorType type);
const Kernel* avx2_kernel(gguf::TensorType type);  // defined in the files built with -mavx2 -mfma -mf16c

// acc[i * acc_stride + c] += weights[i] * row[c] (accumulate_float_row); false when the type is not F32/F16/BF16.
using AccumulateFn = bool (*)(gguf::TensorType type, const void* row, const float* weights, int n, float* acc,
                              int64_t acc_stride, int64_t cols);
bool scalar_accumulate(gguf::TensorType type, const void* row, const float* weights, int n, float* acc,
                       int64_t acc_stride, int64_t cols);
bool avx2_accumulate(gguf::TensorType type, const void* row, const float* weights, int n, float* acc,
                     int64_t acc_stride, int64_t cols);

// Q8_0 activation rows byte-identical to quant::quantize_row (cols a multiple of 32), and the rounding it uses
// (n a multiple of 8), exposed for its exhaustive test.
void avx2_quantize_q8_0(const float* x, void* dst, int64_t cols);
void avx2_round_half_away(const float* x, float* out, int64_t n);

}  // namespace ember::cpu::detail
