// SPDX-License-Identifier: MIT
// What the public API says about a model without exposing its forward pass (model/model.h, private to the engine):
// its facts once loaded, the KV cache types, load progress and cancellation, the memory shape of a file and the
// memory it needs before it is loaded, and the architectures Ember runs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ember/devices.h"
#include "ember/error.h"
#include "ember/gguf.h"

namespace ember {

// Called with the fraction loaded (0..1); return false to cancel (load_model then throws LoadCancelled).
using LoadProgress = std::function<bool(double fraction)>;

// The shape facts every architecture's hyperparameters start with and a loaded model reports.
struct ModelShape {
    int64_t n_vocab = 0;
    int64_t n_ctx_train = 0;
    int64_t n_embd = 0;
    int64_t n_layer = 0;    // layers of the trunk (an MTP head's blocks not counted)
    int64_t n_head = 0;
    int64_t n_head_kv = 0;
    int64_t head_dim = 0;   // attention.key_length
};

struct ModelInfo : ModelShape {
    std::string architecture;  // general.architecture
    std::string name;          // general.name, or the file name
    uint64_t n_params = 0;
    uint64_t weight_bytes = 0;
    bool recurrent = false;     // has layers whose state is not a KV cache (rolls back through snapshots)
};

enum class KvCacheType { f16, q8_0, f32 };

class LoadCancelled : public Error {
public:
    LoadCancelled() : Error("loading was cancelled") {}
};

// What one sequence of a model keeps in memory, by kind, read from its keys alone: estimate_memory_needs and a model
// manager's fit estimate are both built on it. Bytes per position are at f16.
struct MemoryShape {
    int64_t kv_layers = 0;                       // layers with a KV cache: the trunk's attention layers + MTP layers
    uint64_t kv_bytes_per_position = 0;          // keys and values of all KV layers
    uint64_t sliding_kv_bytes_per_position = 0;  // the part of it in sliding-window layers, which keep only
    int64_t sliding_window = 0;                  // this many positions (gguf::sliding_window_cache_rows)
    int64_t recurrent_layers = 0;                // layers whose state is not a KV cache (Gated DeltaNet)
    uint64_t recurrent_state_bytes = 0;          // conv + SSM state of all recurrent layers, fp32, one copy
    uint64_t draft_kv_bytes_per_position = 0;    // the embedded DFlash draft's own KV cache
    int64_t max_batch = 0;                       // tokens in one forward pass
    uint64_t activation_bytes_per_token = 0;     // fp32 activations of one token of a batch
    int64_t n_vocab = 0;                         // logits per position (token_embd.weight rows; 0 when absent)
};

// The keys read_memory_shape insists on. for_loading: every key load_model needs, checked as load_model checks it.
// for_memory_shape: only the keys the shape depends on (a model manager lists files it may never load), and an
// embedded draft is read from its dflash.* keys alone (peek_dflash). A key that is present is checked either way.
enum class RequiredKeys { for_loading, for_memory_shape };

// The memory shape of `file`, through its architecture's own hyperparameter reader; nullopt for an architecture
// load_model does not know (or a file without general.architecture). Throws ember::Error "<file>: key '<key>' ..."
// for a key that is missing (as `required` asks) or impossible. With for_loading, a draft that cannot be read adds
// nothing: loading reports it where it is used.
std::optional<MemoryShape> read_memory_shape(const gguf::File& file,
                                             RequiredKeys required = RequiredKeys::for_loading);

// What `file` needs in memory to run at n_ctx positions (weights, caches and recurrent state with the copies that
// speculation and prompt reuse keep, activations), from its keys and tensor sizes: for choosing a device before
// loading. Throws ember::Error like load_model for a file it cannot read.
MemoryNeeds estimate_memory_needs(const gguf::File& file, int64_t n_ctx, KvCacheType kv_type = KvCacheType::f16);

// Architectures load_model knows.
std::span<const std::string_view> supported_architectures();

}  // namespace ember
