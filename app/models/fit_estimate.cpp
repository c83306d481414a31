// SPDX-License-Identifier: MIT
#include "fit_estimate.h"

#include <algorithm>
#include <cstdio>

#include "ember/gguf.h"
#include "model_facts.h"

namespace ember::models {

namespace {

constexpr uint32_t kMtpDraftTokens = 3;

uint64_t saturating_mul(uint64_t a, uint64_t b) {
    if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
    return a * b;
}

uint64_t saturating_add(uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

}  // namespace

FitInput fit_input(const ModelFacts& model, uint64_t context, uint64_t projector_bytes) {
    FitInput in;
    in.weight_bytes = model.weight_bytes;
    in.draft_weight_bytes = model.draft_bytes;
    in.projector_bytes = projector_bytes;
    const MemoryShape& shape = model.memory;
    in.kv_bytes_per_position = shape.kv_bytes_per_position;
    in.sliding_kv_bytes_per_position = shape.sliding_kv_bytes_per_position;
    in.sliding_kv_positions = static_cast<uint64_t>(gguf::sliding_window_cache_rows(
        shape.sliding_window, static_cast<int64_t>(std::min<uint64_t>(context, INT64_MAX)), shape.max_batch));
    in.draft_kv_bytes_per_position = shape.draft_kv_bytes_per_position;
    in.recurrent_state_bytes = shape.recurrent_state_bytes;
    uint32_t draft_tokens = 0;
    if (model.drafted)
        draft_tokens = model.draft_block_size > 1 ? model.draft_block_size - 1 : 0;
    else if (model.mtp)
        draft_tokens = kMtpDraftTokens;
    in.recurrent_copies = 1 + draft_tokens;
    in.context = context;
    return in;
}

FitReport estimate_fit(const FitInput& input, const MemoryBudget& budget) {
    FitReport r;
    r.weights = input.weight_bytes;
    r.draft_weights = input.draft_weight_bytes;
    r.projector = input.projector_bytes;
    const uint64_t sliding = std::min(input.sliding_kv_bytes_per_position, input.kv_bytes_per_position);
    r.kv_cache = saturating_add(saturating_mul(input.kv_bytes_per_position - sliding, input.context),
                                saturating_mul(sliding, std::min(input.sliding_kv_positions, input.context)));
    r.draft_kv_cache = saturating_mul(input.draft_kv_bytes_per_position, input.context);
    r.recurrent_state = saturating_mul(input.recurrent_state_bytes, input.recurrent_copies);
    for (uint64_t part : {r.weights, r.projector, r.kv_cache, r.draft_kv_cache, r.recurrent_state})
        r.total = saturating_add(r.total, part);

    r.against_gpu = budget.gpu_total.has_value();
    r.capacity = r.against_gpu ? *budget.gpu_total : budget.system_total;
    if (r.capacity > 0 && static_cast<double>(r.total) <= kComfortableShare * static_cast<double>(r.capacity))
        r.verdict = FitVerdict::Fits;
    else if (r.capacity > 0 && r.total <= r.capacity)
        r.verdict = FitVerdict::Tight;
    else
        r.verdict = FitVerdict::WontFit;
    return r;
}

std::string_view verdict_name(FitVerdict verdict) {
    switch (verdict) {
        case FitVerdict::Fits:
            return "fits";
        case FitVerdict::Tight:
            return "tight";
        case FitVerdict::WontFit:
            return "won't fit";
    }
    return "won't fit";
}

std::string format_bytes(uint64_t bytes) {
    char buf[64];
    const double b = static_cast<double>(bytes);
    if (bytes >= (1ull << 30))
        std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1ull << 30));
    else if (bytes >= (1ull << 20))
        std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1ull << 20));
    else if (bytes >= 1024)
        std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024);
    else
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    return buf;
}

std::string describe(const FitReport& r) {
    std::string s = std::string(verdict_name(r.verdict)) + ": needs " + format_bytes(r.total) + " (weights " +
                    format_bytes(r.weights);
    if (r.draft_weights) s += " incl. draft " + format_bytes(r.draft_weights);
    if (r.projector) s += ", vision projector " + format_bytes(r.projector);
    s += ", KV cache " + format_bytes(r.kv_cache);
    if (r.draft_kv_cache) s += ", draft KV cache " + format_bytes(r.draft_kv_cache);
    if (r.recurrent_state) s += ", recurrent state " + format_bytes(r.recurrent_state);
    s += ") of " + (r.capacity ? format_bytes(r.capacity) : std::string("unknown")) +
         (r.against_gpu ? " GPU memory" : " system memory");
    return s;
}

}  // namespace ember::models
