// SPDX-License-Identifier: MIT
// The sizes every architecture's memory-shape reader builds on (ember::MemoryShape counts keys and values at f16,
// recurrent state and activations at fp32).
#pragma once

#include <cstdint>

namespace ember::model {

inline constexpr uint64_t kShapeKvElementBytes = 2;
inline constexpr uint64_t kShapeStateElementBytes = 4;

// The keys and values one attention layer caches per position.
inline uint64_t attention_kv_bytes_per_position(int64_t n_head_kv, int64_t key_dim, int64_t value_dim) {
    return static_cast<uint64_t>(n_head_kv * (key_dim + value_dim)) * kShapeKvElementBytes;
}

// A batch's activations of one token: the residual stream, norms and projections (8 rows of n_embd) and three of
// the widest inner rows (feed-forward, attention projections or the experts' rows).
inline uint64_t activation_bytes_per_token(int64_t n_embd, int64_t widest_inner_rows) {
    return static_cast<uint64_t>(8 * n_embd + 3 * widest_inner_rows) * kShapeStateElementBytes;
}

}  // namespace ember::model
