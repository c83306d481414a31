// SPDX-License-Identifier: MIT
// What the public API says about a model without exposing its forward pass (model/model.h, private to the engine):
// its facts once loaded, the KV cache types, load progress and cancellation, the memory a file needs before it is
// loaded, and the architectures Ember runs.
#pragma once

#include <cstdint>
#include <functional>
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

// What `file` needs in memory to run at n_ctx positions (weights, caches and recurrent state with the copies that
// speculation and prompt reuse keep, activations), from its keys and tensor sizes: for choosing a device before
// loading. Throws ember::Error like load_model for a file it cannot read.
MemoryNeeds estimate_memory_needs(const gguf::File& file, int64_t n_ctx, KvCacheType kv_type = KvCacheType::f16);

// Architectures load_model knows.
std::span<const std::string_view> supported_architectures();

}  // namespace ember
