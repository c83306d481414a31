// SPDX-License-Identifier: MIT
// The DFlash draft model (../specs/speculative.md §3.1-3.4): Qwen3-style layers whose keys and values also come
// from the fused target features, run bidirectionally over a block.
#pragma once

#include "model/model.h"
#include "ember/dflash_file.h"
#include "model/llama_block.h"
#include "model/tensor_arena.h"

namespace ember::model {

struct DFlashWeights {
    Tensor fc;        // [n_taps * n_embd, n_embd]
    Tensor enc_norm;  // [n_embd] (hidden_norm)
    Tensor out_norm;  // [n_embd]
    std::vector<LlamaLayer> layers;  // q/k norms, optional biases
};

class DFlashDraft final : public DraftModel {
public:
    DFlashDraft(const gguf::File& file, const DFlashInfo& info, const Model& target, Backend& backend,
                const LoadProgress& progress);

    int64_t block_size() const override { return info_.block_size; }
    std::span<const int64_t> target_layers() const override { return info_.target_layers; }
    std::unique_ptr<SequenceState> create_state(const StateOptions& options) const override;
    void inject(SequenceState& state, std::span<const float> features, int64_t first_position) const override;
    std::vector<int32_t> draft(SequenceState& state, int32_t last, int64_t position, int n,
                               std::vector<float>* logits) const override;

private:
    // Layer `layer`'s cache and the batch's rows in the state; the queries (none when injecting) sit at query_rows.
    AttentionPlacement placement(const SequenceState& state, size_t layer, std::span<const int32_t> query_rows,
                                 int64_t n_kv) const;

    const Model& target_;
    Backend& backend_;
    DFlashInfo info_;
    RopeParams rope_;
    std::vector<std::unique_ptr<Buffer>> buffers_;
    DFlashWeights w_;
};

}  // namespace ember::model
