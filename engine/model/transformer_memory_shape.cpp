// SPDX-License-Identifier: MIT
// The memory shape of a Llama-family model: every layer keeps a KV cache, a local layer only its window of it.
#include <algorithm>

#include "model/hparams.h"
#include "model/memory_shape.h"

namespace ember::model {

MemoryShape transformer_memory_shape(const gguf::File& file, const std::string& arch, RequiredKeys required) {
    const TransformerHParams hp = read_transformer_hparams(file, arch, RopeMode::normal, required);
    MemoryShape shape;
    const uint64_t layer_bytes = attention_kv_bytes_per_position(hp.n_head_kv, hp.head_dim, hp.head_dim_v);
    shape.kv_layers = hp.n_layer;
    for (int64_t il = 0; il < hp.n_layer; ++il) {
        shape.kv_bytes_per_position += layer_bytes;
        if (hp.is_local_layer(il)) shape.sliding_kv_bytes_per_position += layer_bytes;
    }
    shape.sliding_window = hp.sliding_window;
    shape.max_batch = kTransformerMaxBatch;
    shape.activation_bytes_per_token = activation_bytes_per_token(
        hp.n_embd, std::max({hp.n_ff, hp.n_head * hp.head_dim * 3, hp.n_expert_used * (2 * hp.n_ff_exp + hp.n_embd)}));
    return shape;
}

}  // namespace ember::model
