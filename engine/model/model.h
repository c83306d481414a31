// SPDX-License-Identifier: MIT
// Model architectures: hyperparameters and weights bound from a GGUF file (with shape checks), and the forward
// pass of each architecture written once against the backend interface. A model is immutable after loading;
// everything that changes while a conversation runs (KV caches, recurrent state, activations) lives in a
// SequenceState that the runtime owns. Never touches files other than through gguf::File, never samples.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "ember/gguf.h"
#include "ember/model_info.h"

namespace ember {

struct StateOptions {
    int64_t n_ctx = 4096;
    KvCacheType kv_type = KvCacheType::f16;
    // Recurrent models: how many of a batch's last tokens may be rolled back (speculative verification).
    int64_t max_rollback = 0;
    // Recurrent models: full-state checkpoints kept for prompt reuse (the most recent ones).
    int max_checkpoints = 4;
};

// Per-conversation state of a model (KV caches, recurrent state, scratch activations).
class SequenceState {
public:
    virtual ~SequenceState() = default;
    virtual int64_t capacity() const = 0;     // positions it can hold
    virtual int64_t position() const = 0;     // positions it holds now
    virtual size_t memory_bytes() const = 0;  // device memory it holds, snapshots and checkpoints included
    // Forgets positions >= n and returns how many positions it keeps: n where that is possible, otherwise the
    // nearest smaller position it can restore (a recurrent state rolls back only to kept snapshots, checkpoints
    // or 0); the caller recomputes the rest.
    virtual int64_t truncate(int64_t n) = 0;
    // Keeps a copy of the current state so that a later truncate() can come back to this position. Cheap no-op
    // for models whose state is only a KV cache.
    virtual void checkpoint() {}
};

struct ForwardRequest {
    std::span<const int32_t> tokens;
    int32_t first_position = 0;  // tokens[i] sits at first_position + i
    bool all_logits = false;     // logits of every token; otherwise of the last one only
    // Keep the state after each of the last `rollback` tokens, so truncate() can return to any of them. Such tokens
    // are also computed exactly as single-token decoding computes them (the recurrent form), so verifying drafted
    // tokens in one batch gives the logits plain decoding would. At most StateOptions::max_rollback.
    int64_t rollback = 0;
    // Receives the hidden states after the final norm ([n_out, n_embd]): of the rows whose logits are returned, or
    // of every row with all_hidden (an MTP head needs the hidden state of each position).
    std::vector<float>* hidden = nullptr;
    bool all_hidden = false;
    // Receives, for every row, the residual stream entering each listed layer, concatenated in list order
    // ([n, capture_layers.size() * n_embd]); layer n_layer means the output after the final norm (DFlash drafts
    // read these features).
    std::span<const int64_t> capture_layers;
    std::vector<float>* captured = nullptr;
    // Rows whose input is an embedding instead of their token's (the tokens of an image, ../specs/
    // vision-qwen3vl.md §6): rows [first_row, first_row + n_rows) take embeddings ([n_rows, n_embd]).
    struct EmbeddedRows {
        int64_t first_row = 0;
        int64_t n_rows = 0;
        std::span<const float> embeddings;
    };
    std::span<const EmbeddedRows> embedded;
    // M-RoPE positions (t, h, w) of each row, axis-major ([t...][h...][w...], 3 * tokens values); empty: every
    // axis is the row's position. The cache slot of a row stays first_position + i either way.
    std::span<const int32_t> rope_positions;
};

// A model's own multi-token-prediction head (e.g. Qwen3.6's MTP block): predicts the token after next from a
// token and the trunk's hidden state at the position before it.
class MtpHead {
public:
    virtual ~MtpHead() = default;
    virtual std::unique_ptr<SequenceState> create_state(const StateOptions& options) const = 0;
    // Rows i: (tokens[i] at first_position + i, hiddens[i] = the trunk's hidden after the final norm at the
    // position before). Writes logits [n, n_vocab] and the head's own normed outputs [n, n_embd], which serve as
    // the hidden input of the next drafting step; with all_rows false, those of the last row only (rows that only
    // extend the head's context need no output head).
    virtual void forward(SequenceState& state, std::span<const int32_t> tokens, std::span<const float> hiddens,
                         int32_t first_position, std::vector<float>& logits, std::vector<float>& hidden,
                         bool all_rows) const = 0;
    void forward(SequenceState& state, std::span<const int32_t> tokens, std::span<const float> hiddens,
                 int32_t first_position, std::vector<float>& logits, std::vector<float>& hidden) const {
        forward(state, tokens, hiddens, first_position, logits, hidden, true);
    }
};

class Model {
public:
    virtual ~Model() = default;
    virtual const ModelInfo& info() const = 0;
    virtual std::unique_ptr<SequenceState> create_state(const StateOptions& options) const = 0;
    // The most tokens one forward() call takes; the runtime splits longer prompts.
    virtual int64_t max_batch() const = 0;
    // Runs tokens through the model, extending the state, and writes the requested logits row by row
    // ([n_out, n_vocab]) into `logits`. Throws ember::Error on bad input (token outside the vocabulary,
    // positions beyond the state's capacity).
    virtual void forward(SequenceState& state, const ForwardRequest& request, std::vector<float>& logits) const = 0;
    // Whether forward() takes embedded rows and M-RoPE positions (a model that can read images).
    virtual bool takes_images() const { return false; }
    // The model's MTP head, when the file has one.
    virtual const MtpHead* mtp() const { return nullptr; }
    // The token embedding table and the output head (drafts borrow them).
    virtual const Tensor& token_embedding() const = 0;
    virtual const Tensor& output_head() const = 0;
};

// A DFlash block-diffusion draft (../specs/speculative.md §3): fuses the target's layer inputs into keys and
// values of every draft layer, then predicts a whole block [last token, mask x (block - 1)] in one bidirectional
// pass, through the target's own embedding table and output head.
class DraftModel {
public:
    virtual ~DraftModel() = default;
    virtual int64_t block_size() const = 0;
    virtual std::span<const int64_t> target_layers() const = 0;  // the target layers whose inputs it reads
    virtual std::unique_ptr<SequenceState> create_state(const StateOptions& options) const = 0;
    // Context: the target's features of rows at positions [first_position, first_position + n)
    // ([n, target_layers().size() * n_embd], ForwardRequest::captured).
    virtual void inject(SequenceState& state, std::span<const float> features, int64_t first_position) const = 0;
    // Greedy tokens for block positions 1..n after `last` at `position` (the context must cover [0, position)).
    // logits, when given, receives the block rows 0..n ([n + 1, n_vocab]).
    virtual std::vector<int32_t> draft(SequenceState& state, int32_t last, int64_t position, int n,
                                       std::vector<float>* logits = nullptr) const = 0;
};

// The DFlash draft of `draft_file` (embedded under dflash.*, or a standalone `dflash` file), checked against the
// target (../specs/drafted-gguf.md §5, §6) and bound on the target's backend. Throws ember::Error naming the
// file and the problem.
std::unique_ptr<DraftModel> load_dflash_draft(const gguf::File& draft_file, const Model& target, Backend& backend,
                                              const LoadProgress& progress = {});

// The architecture named by general.architecture, bound to the file's tensors on `backend`. The file and the
// backend must outlive the model. Throws ember::Error naming the file and the key or tensor at fault.
std::unique_ptr<Model> load_model(const gguf::File& file, Backend& backend, const LoadProgress& progress = {});

}  // namespace ember
