// SPDX-License-Identifier: MIT
// Attention KV caches: their rows per layer, writing new rows and cutting back.
#include "model/kv_cache.h"

#include <algorithm>

namespace ember::model {

gguf::TensorType kv_tensor_type(KvCacheType type) {
    switch (type) {
        case KvCacheType::f16: return gguf::TensorType::F16;
        case KvCacheType::q8_0: return gguf::TensorType::Q8_0;
        case KvCacheType::f32: return gguf::TensorType::F32;
    }
    return gguf::TensorType::F16;
}

KvCache::KvCache(Backend& backend, int64_t n_layers, int64_t capacity, int64_t k_cols, int64_t v_cols,
                 KvCacheType type)
    : KvCache(backend, std::vector<int64_t>(static_cast<size_t>(n_layers), capacity), k_cols, v_cols, type) {}

KvCache::KvCache(Backend& backend, const std::vector<int64_t>& rows, int64_t k_cols, int64_t v_cols,
                 KvCacheType type)
    : capacity_(rows.empty() ? 0 : *std::max_element(rows.begin(), rows.end())) {
    const gguf::TensorType t = kv_tensor_type(type);
    const uint32_t block = gguf::traits(t).block_size;
    if (k_cols % block != 0 || v_cols % block != 0)
        throw Error("a " + std::string(gguf::traits(t).name) + " KV cache needs rows that are multiples of " +
                    std::to_string(block) + " (this model has " + std::to_string(k_cols) + "); use f16");
    std::vector<std::pair<size_t, size_t>> slots;
    for (const int64_t n : rows) slots.emplace_back(arena_.plan(t, n, k_cols), arena_.plan(t, n, v_cols));
    arena_.allocate(backend);
    for (const auto& [k, v] : slots) {
        k_.push_back(arena_.get(k));
        v_.push_back(arena_.get(v));
    }
}

}  // namespace ember::model
