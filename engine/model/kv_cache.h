// SPDX-License-Identifier: MIT
// Key and value caches of attention layers: per layer, `capacity` rows (or the layer's own count of rows) of
// n_head_kv * head_dim elements.
#pragma once

#include <vector>

#include "model/model.h"
#include "model/tensor_arena.h"

namespace ember::model {

gguf::TensorType kv_tensor_type(KvCacheType type);

class KvCache {
public:
    // Throws ember::Error when the cache type cannot hold rows of this length (Q8_0 needs multiples of 32).
    KvCache(Backend& backend, int64_t n_layers, int64_t capacity, int64_t k_cols, int64_t v_cols, KvCacheType type);
    // rows[l] rows for layer l; capacity() is the largest.
    KvCache(Backend& backend, const std::vector<int64_t>& rows, int64_t k_cols, int64_t v_cols, KvCacheType type);

    const Tensor& k(size_t layer) const { return k_[layer]; }
    const Tensor& v(size_t layer) const { return v_[layer]; }
    int64_t capacity() const { return capacity_; }
    size_t bytes() const { return arena_.bytes(); }

private:
    int64_t capacity_;
    TensorArena arena_;
    std::vector<Tensor> k_;
    std::vector<Tensor> v_;
};

}  // namespace ember::model
