// SPDX-License-Identifier: MIT
// The speculative parts of ember-cli bench: decode through a session with and without drafting (speedup,
// acceptance, whether the tokens are the same), and the cost of verifying k tokens in one batch relative to one
// decode step.
#pragma once

#include <nlohmann/json.hpp>

#include "ember/runtime.h"

namespace ember::cli {

// Greedy generation of n_gen tokens after `prompt`, r times, plain and speculative. Null JSON when the model has
// no draft.
nlohmann::ordered_json bench_speculation(const std::shared_ptr<LoadedModel>& model, SessionOptions options,
                                         std::span<const int32_t> prompt, int64_t n_gen, int64_t reps);

// For k = 1..max_tokens: seconds of one forward of k tokens kept for rollback (a verify pass) after `prompt`,
// relative to one plain single-token decode step.
nlohmann::ordered_json bench_verify_cost(const std::shared_ptr<const LoadedModel>& model, KvCacheType kv_type,
                                         std::span<const int32_t> prompt, int max_tokens);

}  // namespace ember::cli
