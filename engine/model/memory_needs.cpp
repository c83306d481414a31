// SPDX-License-Identifier: MIT
// estimate_memory_needs: what a model file needs in memory at a context, from its keys and tensor sizes alone (no
// tensor data is read), for choosing the device before anything is loaded.
#include <algorithm>

#include "model/model.h"
#include "ember/dflash_file.h"
#include "model/hparams.h"
#include "model/llama_family.h"
#include "model/qwen35_hparams.h"
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

uint64_t kv_bytes(int64_t layers, int64_t n_head_kv, int64_t head_dim, int64_t n_ctx, KvCacheType type) {
    return static_cast<uint64_t>(2.0 * static_cast<double>(layers * n_head_kv * head_dim * n_ctx) *
                                 kv_element_bytes(type));
}

// The speculative rollback a session may keep (a DFlash block, or the MTP head's drafts), and the prompt-reuse
// checkpoints of StateOptions: both copy a recurrent state.
constexpr int64_t kRollbackCopies = 16;
constexpr int64_t kCheckpointCopies = 4;

}  // namespace

MemoryNeeds estimate_memory_needs(const gguf::File& file, int64_t n_ctx, KvCacheType kv_type) {
    MemoryNeeds needs;
    for (const gguf::TensorInfo& t : file.tensors()) {
        needs.weights += t.n_bytes;
        if (model::is_expert_tensor(t.name)) needs.expert_weights += t.n_bytes;
    }
    const std::string arch(file.get_string("general.architecture"));
    int64_t n_embd = 0, n_vocab = 0, batch = 512, ffn_rows = 0;
    if (arch == "qwen35moe") {
        const model::Qwen35HParams hp = model::read_qwen35_hparams(file);
        const auto attention = std::count(hp.recurrent.begin(), hp.recurrent.end(), false);
        const auto recurrent = static_cast<int64_t>(hp.recurrent.size()) - attention;
        needs.state = kv_bytes(attention, hp.n_head_kv, hp.head_dim, n_ctx, kv_type);
        const int64_t state_floats = hp.h_v * hp.d_k * hp.d_v + (hp.conv_kernel - 1) * hp.conv_dim();
        needs.state += static_cast<uint64_t>(recurrent * state_floats * 4 * (1 + kRollbackCopies + kCheckpointCopies));
        n_embd = hp.n_embd, n_vocab = hp.n_vocab, batch = model::kQwen35MaxBatch;
        ffn_rows = std::max(hp.n_expert_used * hp.n_ff_exp, std::max(hp.conv_dim(), hp.n_head * hp.head_dim * 2));
    } else if (std::ranges::find(model::kLlamaFamilyArchitectures, arch) != model::kLlamaFamilyArchitectures.end()) {
        const model::TransformerHParams hp = model::read_transformer_hparams(file, arch, RopeMode::normal);
        const int64_t width = std::max(hp.head_dim, hp.head_dim_v);
        for (int64_t il = 0; il < hp.n_layer; ++il) {
            needs.state += kv_bytes(1, hp.n_head_kv, width, hp.kv_cache_rows(il, n_ctx, model::kTransformerMaxBatch),
                                    kv_type);
        }
        n_embd = hp.n_embd, n_vocab = hp.n_vocab;
        ffn_rows = std::max({hp.n_ff, hp.n_head * hp.head_dim * 3, hp.n_expert_used * (2 * hp.n_ff_exp + hp.n_embd)});
    }  // other architectures: load_model says they are not supported
    // A draft that cannot be read adds nothing here: loading reports it where it is used, and ignores it where
    // speculation is off.
    try {
        if (const std::optional<model::DFlashInfo> draft = model::find_dflash(file))
            needs.state += kv_bytes(draft->n_layer, draft->n_head_kv, draft->head_dim, n_ctx, kv_type);
    } catch (const Error&) {
    }
    // A batch's activations (the residual stream, norms, projections, feed-forward rows) and the logits of a
    // verified draft block.
    needs.scratch =
        static_cast<uint64_t>(batch * (8 * n_embd + 3 * ffn_rows) * 4 + (kRollbackCopies + 1) * n_vocab * 4);
    return needs;
}

}  // namespace ember
