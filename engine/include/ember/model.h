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

#include "ember/backend.h"
#include "ember/gguf.h"

namespace ember {

struct ModelInfo {
    std::string architecture;  // general.architecture
    std::string name;          // general.name, or the file name
    int64_t n_vocab = 0;
    int64_t n_ctx_train = 0;
    int64_t n_embd = 0;
    int64_t n_layer = 0;
    int64_t n_head = 0;
    int64_t n_head_kv = 0;
    int64_t head_dim = 0;
    uint64_t n_params = 0;
    uint64_t weight_bytes = 0;
};

enum class KvCacheType { f16, q8_0, f32 };

// Per-conversation state of a model (KV caches, recurrent state, scratch activations).
class SequenceState {
public:
    virtual ~SequenceState() = default;
    virtual int64_t capacity() const = 0;     // positions it can hold
    virtual size_t memory_bytes() const = 0;  // device memory it holds
    // Forgets positions >= n. Returns false where the state cannot be cut there (the caller starts over).
    virtual bool truncate(int64_t n) = 0;
};

struct ForwardRequest {
    std::span<const int32_t> tokens;
    int32_t first_position = 0;  // tokens[i] sits at first_position + i
    bool all_logits = false;     // logits of every token; otherwise of the last one only
};

class Model {
public:
    virtual ~Model() = default;
    virtual const ModelInfo& info() const = 0;
    virtual std::unique_ptr<SequenceState> create_state(int64_t n_ctx, KvCacheType kv_type) const = 0;
    // The most tokens one forward() call takes; the runtime splits longer prompts.
    virtual int64_t max_batch() const = 0;
    // Runs tokens through the model, extending the state, and writes the requested logits row by row
    // ([n_out, n_vocab]) into `logits`. Throws ember::Error on bad input (token outside the vocabulary,
    // positions beyond the state's capacity).
    virtual void forward(SequenceState& state, const ForwardRequest& request, std::vector<float>& logits) const = 0;
};

class LoadCancelled : public Error {
public:
    LoadCancelled() : Error("loading was cancelled") {}
};

// Called with the fraction loaded (0..1); return false to cancel (load_model then throws LoadCancelled).
using LoadProgress = std::function<bool(double fraction)>;

// The architecture named by general.architecture, bound to the file's tensors on `backend`. The file and the
// backend must outlive the model. Throws ember::Error naming the file and the key or tensor at fault.
std::unique_ptr<Model> load_model(const gguf::File& file, Backend& backend, const LoadProgress& progress = {});

// Architectures load_model knows.
std::span<const std::string_view> supported_architectures();

}  // namespace ember
