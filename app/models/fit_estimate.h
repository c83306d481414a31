// SPDX-License-Identifier: MIT
// "Will it fit": the memory a model needs at a chosen context (weights + KV cache + recurrent state + draft) against
// the machine's memory and the GPU's, with a verdict of fits / tight / won't fit and the numbers behind it.
//
// Qt-free and engine-free: plain numbers in, plain numbers out. It never allocates anything large and never probes
// hardware itself; memory sizes come from the caller (see memory_info.h), the GPU's from an injectable provider.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ember::models {

struct ModelFacts;

// What a model needs, per its file(s).
struct FitInput {
    uint64_t weight_bytes = 0;                 // all tensors of the model file (the draft and MTP head included)
    uint64_t draft_weight_bytes = 0;           // the part of weight_bytes that is the DFlash draft (shown apart)
    uint64_t projector_bytes = 0;              // a paired vision projector, when it will be loaded
    uint64_t kv_bytes_per_position = 0;        // the model's KV cache (trunk attention + MTP layers)
    uint64_t sliding_kv_bytes_per_position = 0;  // the part of it in sliding-window layers, which keep at most
    uint64_t sliding_kv_positions = 0;           // this many positions
    uint64_t draft_kv_bytes_per_position = 0;  // the DFlash draft's KV cache
    uint64_t recurrent_state_bytes = 0;        // one copy of the recurrent state
    uint32_t recurrent_copies = 1;             // 1 + the speculative rollback snapshots (speculative.md §4)
    uint64_t context = 0;                      // positions
};

// The model's needs at `context`, from its facts. Speculation keeps extra recurrent-state snapshots: one per token
// a draft may propose (DFlash: block size - 1; MTP: 3), so the estimate counts them.
FitInput fit_input(const ModelFacts& model, uint64_t context, uint64_t projector_bytes = 0);

struct MemoryBudget {
    uint64_t system_total = 0;          // MemTotal
    uint64_t system_available = 0;      // MemAvailable
    std::optional<uint64_t> gpu_total;  // device-local memory; unknown until a backend reports it
};

enum class FitVerdict { Fits, Tight, WontFit };

struct FitReport {
    uint64_t weights = 0;
    uint64_t draft_weights = 0;  // included in weights
    uint64_t projector = 0;
    uint64_t kv_cache = 0;
    uint64_t draft_kv_cache = 0;
    uint64_t recurrent_state = 0;
    uint64_t total = 0;
    uint64_t capacity = 0;     // the memory the verdict was made against
    bool against_gpu = false;  // capacity is the GPU's (else the system's)
    FitVerdict verdict = FitVerdict::WontFit;
};

// Fits: total ≤ 85 % of capacity (room for compute buffers and the desktop). Tight: total ≤ capacity.
// Won't fit: more than capacity. Capacity is the GPU's memory when known, else the system's total memory.
inline constexpr double kComfortableShare = 0.85;
FitReport estimate_fit(const FitInput& input, const MemoryBudget& budget);

std::string_view verdict_name(FitVerdict verdict);  // "fits", "tight", "won't fit"
// One line: "fits: needs 19.3 GiB (weights 17.8 GiB, KV 704.0 MiB, ...) of 128.0 GiB system memory".
std::string describe(const FitReport& report);
std::string format_bytes(uint64_t bytes);  // "704.0 MiB", "17.79 GiB"

}  // namespace ember::models
