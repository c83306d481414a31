// SPDX-License-Identifier: MIT
// Qwen3.6-35B-A3B (`qwen35moe`, ../specs/qwen35moe.md): a trunk of Gated-DeltaNet and gated full-attention layers,
// every one with a 256-expert MoE feed-forward, and an optional MTP head (speculative.md §2).
//   x += Mixer(rms_norm(x; attn_norm));  x += MoE(rms_norm(x; post_attention_norm))
#pragma once

#include <memory>

#include "model/model.h"
#include "model/qwen35_hparams.h"
#include "model/qwen35_state.h"
#include "model/qwen35_weights.h"

namespace ember::model {

class Qwen35MoeModel;

class Qwen35Mtp final : public MtpHead {
public:
    explicit Qwen35Mtp(const Qwen35MoeModel& model) : model_(model) {}
    std::unique_ptr<SequenceState> create_state(const StateOptions& options) const override;
    using MtpHead::forward;
    void forward(SequenceState& state, std::span<const int32_t> tokens, std::span<const float> hiddens,
                 int32_t first_position, std::vector<float>& logits, std::vector<float>& hidden,
                 bool all_rows) const override;

private:
    const Qwen35MoeModel& model_;
};

class Qwen35MoeModel final : public Model {
public:
    Qwen35MoeModel(const gguf::File& file, Backend& backend, const LoadProgress& progress);

    const ModelInfo& info() const override { return info_; }
    std::unique_ptr<SequenceState> create_state(const StateOptions& options) const override;
    int64_t max_batch() const override { return kQwen35MaxBatch; }
    void forward(SequenceState& state, const ForwardRequest& request, std::vector<float>& logits) const override;
    const Tensor& token_embedding() const override { return w_.token_embd; }
    const Tensor& output_head() const override { return w_.output; }
    const MtpHead* mtp() const override { return mtp_ ? &*mtp_ : nullptr; }
    bool takes_images() const override { return true; }

private:
    friend class Qwen35Mtp;
    // One block's parts, on rows [0, n) of the state's activations; `out` receives the mixer's or MoE's output.
    // Each mixer ends with `then` if given (the residual add and the norm after it).
    void gated_attention(Qwen35State& st, const Qwen35Layer& l, const Tensor& h, int64_t n, const Tensor& out,
                         const ResidualNorm* then = nullptr) const;
    void gated_deltanet(Qwen35State& st, const Qwen35Layer& l, const Tensor& h, int64_t n, bool recurrent_form,
                        const Tensor& out, const ResidualNorm* then = nullptr) const;
    void moe(Qwen35State& st, const MoeWeights& m, const Tensor& h, int64_t n, const Tensor& out,
             const ResidualNorm* then = nullptr) const;
    // The request's embedded rows into x and its M-RoPE positions into the state (after begin_batch).
    void take_image_rows(Qwen35State& st, const ForwardRequest& request, int64_t n, const Tensor& x) const;
    Backend& backend_;
    Qwen35HParams hp_;
    ModelInfo info_;
    std::vector<std::unique_ptr<Buffer>> weight_buffers_;
    Qwen35Weights w_;
    int64_t n_attention_ = 0;
    int64_t n_recurrent_ = 0;
    std::optional<Qwen35Mtp> mtp_;
};

}  // namespace ember::model
