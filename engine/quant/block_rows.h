// SPDX-License-Identifier: MIT
// Typed views of a row's blocks, and the validator every block type with fp16 scales shares.
#pragma once

#include "quant/formats.h"

namespace ember::quant::detail {

template <typename Block>
const Block* blocks_of(const void* p) { return static_cast<const Block*>(p); }
template <typename Block>
Block* blocks_of(void* p) { return static_cast<Block*>(p); }

// Rejects a non-finite fp16 scale d and, where the block has one, a non-finite fp16 dmin (K-quants) or minimum m.
template <typename Block>
void check_fp16_block_scales(const void* src, int64_t n_blocks) {
    const auto* b = blocks_of<Block>(src);
    for (int64_t k = 0; k < n_blocks; ++k) {
        check_fp16_scale(k, "scale d", b[k].d);
        if constexpr (requires { b[k].dmin; }) check_fp16_scale(k, "scale dmin", b[k].dmin);
        if constexpr (requires { b[k].m; }) check_fp16_scale(k, "minimum m", b[k].m);
    }
}

}  // namespace ember::quant::detail
