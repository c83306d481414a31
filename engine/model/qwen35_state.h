// SPDX-License-Identifier: MIT
// The per-sequence state of `qwen35moe`: KV caches of the attention layers, the conv and delta states of the
// Gated-DeltaNet layers, per-token snapshots of the recurrent state for rollback, full checkpoints for prompt reuse,
// and the activations of one batch. Also serves the MTP head (one attention layer, no recurrent layers).
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "model/model.h"
#include "model/kv_cache.h"
#include "model/qwen35_hparams.h"
#include "model/tensor_arena.h"

namespace ember::model {

// One batch's activations, sized for `batch` tokens.
struct Qwen35Activations {
    Tensor x, h, h2;                              // [B, n_embd]
    Tensor attn_p;                                // [B, n_head * 2 * head_dim]  q ‖ gate per head
    Tensor q, gate, attn;                         // [B, n_head * head_dim]
    Tensor k, v;                                  // [B, n_head_kv * head_dim]
    Tensor mix, conv;                             // [B, conv_dim]  before and after the convolution
    Tensor z, o;                                  // [B, value_dim]
    Tensor beta, g;                               // [B, h_v]
    Tensor router;                                // [B, n_expert]
    Tensor expert_ids;                            // I32 [B, n_expert_used]
    Tensor expert_weights;                        // [B, n_expert_used]
    Tensor exp_gate, exp_up;                      // [B * n_expert_used, n_ff_exp]
    Tensor exp_down;                              // [B * n_expert_used, n_embd]
    Tensor shared_scale;                          // [B, 1]
    Tensor sh_gate, sh_up;                        // [B, n_ff_shexp]
    Tensor sh_out;                                // [B, n_embd]
    Tensor mtp_cat;                               // [B, 2 * n_embd] (MTP head only)
};

class Qwen35State final : public SequenceState {
public:
    Qwen35State(Backend& backend, const Qwen35HParams& hp, const StateOptions& options, int64_t n_attention,
                int64_t n_recurrent, int64_t batch, bool mtp);

    int64_t capacity() const override { return kv_.capacity(); }
    int64_t position() const override { return n_past_ + origin_; }
    size_t memory_bytes() const override;
    int64_t truncate(int64_t n) override;
    void checkpoint() override;

    // An empty state may start at a later position (the MTP head's first row sits at position 1); its cache
    // slots then count from there.
    void set_origin(int64_t position);
    // Before a batch: where it starts and how many of its last tokens may be rolled back.
    void begin_batch(int64_t n_tokens, int64_t rollback);
    void end_batch(int64_t n_tokens) { n_past_ += n_tokens; }

    const KvCache& kv() const { return kv_; }
    const Tensor& conv_state(int64_t layer) const { return conv_[static_cast<size_t>(layer)]; }
    const Tensor& delta_state(int64_t layer) const { return ssm_[static_cast<size_t>(layer)]; }
    // Rollback snapshots of a recurrent layer for the current batch (null when the batch keeps none).
    std::optional<Tensor> delta_snapshots(int64_t layer) const;
    // After a layer's convolution: records the conv state after each rolled-back token from the inputs `mix`
    // ([n, conv_dim]) and the conv state from before the batch (saved by save_conv_before()).
    void save_conv_before(int64_t layer);
    void record_conv_snapshots(int64_t layer, const Tensor& mix, int64_t n_tokens);

    Qwen35Activations act;
    Tensor logits(int64_t rows);
    std::vector<int32_t> positions;  // of the batch's tokens (RoPE)
    std::vector<int32_t> mrope;      // M-RoPE (t, h, w) of the batch's rows, axis-major; empty: text positions
    std::vector<int32_t> slots;      // their cache rows (positions - origin)
    int64_t batch() const { return batch_; }

private:
    struct Checkpoint {
        int64_t position;
        std::unique_ptr<Buffer> buffer;
    };

    Backend& backend_;
    Qwen35HParams hp_;
    StateOptions options_;
    int64_t n_recurrent_;
    int64_t batch_;
    int64_t n_past_ = 0;  // cache rows filled
    int64_t origin_ = 0;  // position of cache row 0
    KvCache kv_;
    TensorArena recurrent_arena_;
    std::vector<Tensor> conv_, ssm_;
    TensorArena snapshot_arena_;
    std::vector<Tensor> ssm_snap_, conv_snap_;  // per layer: [max_rollback, ...] and [max_rollback * (K-1), conv]
    Tensor conv_before_;                        // [K-1, conv_dim]
    int64_t snap_first_ = 0;  // position of the token whose post-state is snapshot row 0
    int64_t snap_count_ = 0;  // valid snapshot rows
    int64_t batch_rollback_ = 0;
    std::deque<Checkpoint> checkpoints_;
    TensorArena activation_arena_;
    std::unique_ptr<Buffer> logits_buffer_;
    int64_t logits_rows_ = 0;
};

}  // namespace ember::model
