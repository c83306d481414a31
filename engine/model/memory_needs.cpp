// SPDX-License-Identifier: MIT
// estimate_memory_needs: what a model file needs in memory at a context, from its tensor sizes and its memory shape
// (read_memory_shape; no tensor data is read), for choosing the device before anything is loaded.
#include "model/model.h"
#include "model/weight_binder.h"

namespace ember {

namespace {

// Bytes of one cached key or value element.
double kv_element_bytes(KvCacheType type) {
    switch (type) {
        case KvCacheType::f16:
            return 2.0;
        case KvCacheType::q8_0:
            return 34.0 / 32.0;
        case KvCacheType::f32:
            return 4.0;
    }
    return 2.0;
}

// The speculative rollback a session may keep (a DFlash block, or the MTP head's drafts), and the prompt-reuse
// checkpoints of StateOptions: both copy a recurrent state.
constexpr uint64_t kRollbackCopies = 16;
constexpr uint64_t kCheckpointCopies = 4;

// The KV caches of the model and its draft at n_ctx positions, at f16 as the shape counts them.
uint64_t kv_cache_f16_bytes(const MemoryShape& shape, int64_t n_ctx) {
    const auto positions = static_cast<uint64_t>(n_ctx);
    const auto sliding_rows =
        static_cast<uint64_t>(gguf::sliding_window_cache_rows(shape.sliding_window, n_ctx, shape.max_batch));
    return (shape.kv_bytes_per_position - shape.sliding_kv_bytes_per_position) * positions +
           shape.sliding_kv_bytes_per_position * sliding_rows + shape.draft_kv_bytes_per_position * positions;
}

}  // namespace

MemoryNeeds estimate_memory_needs(const gguf::File& file, int64_t n_ctx, KvCacheType kv_type) {
    MemoryNeeds needs;
    for (const gguf::TensorInfo& t : file.tensors()) {
        needs.weights += t.n_bytes;
        if (model::is_expert_tensor(t.name)) needs.expert_weights += t.n_bytes;
    }
    // An architecture load_model does not know needs its weights here; loading says it is not supported.
    const std::optional<MemoryShape> shape = read_memory_shape(file);
    if (!shape) return needs;
    needs.state = static_cast<uint64_t>(static_cast<double>(kv_cache_f16_bytes(*shape, n_ctx)) *
                                        kv_element_bytes(kv_type) / 2.0) +
                  shape->recurrent_state_bytes * (1 + kRollbackCopies + kCheckpointCopies);
    // A batch's activations and the logits of a verified draft block.
    needs.scratch = static_cast<uint64_t>(shape->max_batch) * shape->activation_bytes_per_token +
                    (kRollbackCopies + 1) * static_cast<uint64_t>(shape->n_vocab) * 4;
    return needs;
}

}  // namespace ember
