// SPDX-License-Identifier: MIT
// Decoder-only transformers of the Llama family: `llama` (incl. SmolLM2, Llama 3), `qwen2` (q/k/v biases),
// `qwen3` (RMS norms on q and k per head), `qwen3moe` (qwen3 with a mixture of experts), `gemma3` (QK norms,
// norms after the attention and the feed-forward too, GeGLU, scaled embeddings, sliding-window local layers) and
// `gpt-oss` (biases everywhere, attention sinks, alternating windowed and full layers, YaRN, experts with biases and
// a clamped SwiGLU, routed by a softmax over the top k logits).
// Pre-norm blocks: x += Wo·attn(rope(Wq h), rope(Wk h), Wv h) with h = rms_norm(x); x += Wdown·(act(Wgate h) *
// Wup h) with h = rms_norm(x).
#pragma once

#include <optional>
#include <string_view>

#include "model/model.h"
#include "model/hparams.h"
#include "model/llama_block.h"

namespace ember::model {

class LlamaFamilyModel final : public Model {
public:
    LlamaFamilyModel(const gguf::File& file, Backend& backend, const LoadProgress& progress);

    const ModelInfo& info() const override { return info_; }
    std::unique_ptr<SequenceState> create_state(const StateOptions& options) const override;
    int64_t max_batch() const override { return kTransformerMaxBatch; }
    void forward(SequenceState& state, const ForwardRequest& request, std::vector<float>& logits) const override;
    const Tensor& token_embedding() const override { return token_embd_; }
    const Tensor& output_head() const override { return output_; }

private:
    void bind_yarn(const gguf::File& file);

    Backend& backend_;
    TransformerHParams hp_;
    ModelInfo info_;
    std::vector<std::unique_ptr<Buffer>> weight_buffers_;
    Tensor token_embd_;                   // [n_embd, n_vocab]
    Tensor output_norm_;                  // [n_embd]
    Tensor output_;                       // [n_embd, n_vocab] (token_embd_ when tied)
    std::optional<Tensor> rope_factors_;  // [n_rot / 2] (Llama 3 frequency scaling, or YaRN's divisors)
    std::vector<LlamaLayer> layers_;
    Activation ffn_activation_ = Activation::silu;  // gelu (tanh form) for gemma3, swiglu_clamped for gpt-oss
    float yarn_score_factor_ = 1.0f;                // YaRN: the attention factor squared
    std::unique_ptr<Buffer> yarn_buffer_;           // holds rope_factors_ under YaRN
};

}  // namespace ember::model
