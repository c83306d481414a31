// SPDX-License-Identifier: MIT
// The memory shape of qwen35moe (../specs/qwen35moe.md §5.6): a KV cache in the full-attention and MTP layers, a
// fixed-size state in the Gated DeltaNet layers.
#include <algorithm>

#include "model/memory_shape.h"
#include "model/qwen35_hparams.h"

namespace ember::model {

MemoryShape qwen35_memory_shape(const gguf::File& file, const std::string&, RequiredKeys required) {
    const Qwen35HParams hp = read_qwen35_hparams(file, required);
    MemoryShape shape;
    shape.recurrent_layers = std::count(hp.recurrent.begin(), hp.recurrent.end(), true);
    shape.kv_layers = static_cast<int64_t>(hp.recurrent.size()) - shape.recurrent_layers;
    shape.kv_bytes_per_position =
        static_cast<uint64_t>(shape.kv_layers) * attention_kv_bytes_per_position(hp.n_head_kv, hp.head_dim, hp.head_dim);
    shape.recurrent_state_bytes =
        static_cast<uint64_t>(shape.recurrent_layers * hp.recurrent_state_floats()) * kShapeStateElementBytes;
    shape.max_batch = kQwen35MaxBatch;
    shape.activation_bytes_per_token = activation_bytes_per_token(
        hp.n_embd, std::max({hp.n_expert_used * hp.n_ff_exp, hp.conv_dim(), hp.n_head * hp.head_dim * 2}));
    return shape;
}

}  // namespace ember::model
