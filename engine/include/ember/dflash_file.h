// SPDX-License-Identifier: MIT
// Public: a DFlash draft's hyperparameters as a file carries them, and the checks every reader of a draft makes
// (../specs/drafted-gguf.md §5, §6): the draft model loader and `ember-gguf merge-draft / split-draft / inspect`
// share them. Only keys and tensor infos are read: no tensor data, no model code.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ember/gguf.h"

namespace ember::model {

struct DFlashInfo {
    int64_t n_layer = 0;  // dflash.block_count
    int64_t n_embd = 0;   // dflash.embedding_length (= the target's)
    int64_t n_head = 0;
    int64_t n_head_kv = 0;
    int64_t head_dim = 0;  // dflash.attention.key_length (value_length must be the same)
    int64_t n_ff = 0;
    int64_t block_size = 0;              // dflash.block_size, 16 when absent
    float rope_base = 0;                 // dflash.rope.freq_base, 10000 when absent; NeoX RoPE over the whole head
    float eps = 0;                       // dflash.attention.layer_norm_rms_epsilon
    std::vector<int64_t> target_layers;  // each in [1, target n_layer]: the target layer whose input is tapped
    int32_t mask_token = -1;
    std::string prefix;          // of the draft's tensor names: "dflash." in a drafted file, "" in a standalone draft
    bool has_biases = false;     // the optional attn_{q,k,v,output}.bias tensors are present (all or some)
    int64_t sliding_window = 0;  // dflash.attention.sliding_window, 0 when absent
    std::vector<bool> sliding_layers;  // dflash.attention.sliding_window_pattern (n_layer entries), empty when absent
};

// Receives the warnings of §5 step 5 and §6 step 2 (one line each, naming the file).
using DFlashWarning = std::function<void(const std::string&)>;

// What a target needs to be checked against: its trunk (block_count - nextn_predict_layers).
struct DFlashTarget {
    int64_t n_embd = 0;
    int64_t n_layer = 0;
    int64_t n_vocab = 0;  // entries of tokenizer.ggml.tokens (token_embd.weight rows when absent)
};

// The prefix of a drafted file's draft keys and tensors (§2): dflash.block_count, dflash.fc.weight, ...
inline constexpr std::string_view kDraftPrefix = "dflash.";

// The one rule for a standalone draft (§1, §7.1 step 2): general.architecture is "dflash", or the alias
// "dflash-draft" that readers also accept.
bool is_draft_architecture(std::string_view architecture);
// The same rule, read from a file: no general.architecture means no draft; one that is not a string throws like
// gguf::File::get_string.
bool is_standalone_draft(const gguf::File& file);

// The target part of a file: `<arch>.embedding_length`, the trunk layers and the vocabulary size.
DFlashTarget dflash_target(const gguf::File& target);

// Whether the file carries an embedded draft (§6 step 2): dflash.embedded is true, or, for published fused files,
// dflash.block_count and a dflash.fc.weight tensor are present without a bool marker (with a warning).
bool is_drafted(const gguf::File& file, const DFlashWarning& warn = {});

// The draft in `file`, checked against `target` per §6 step 4 and §5. prefix "dflash." reads a drafted file (a
// missing mask is then "drafted GGUF has no DFlash mask token ..."); prefix "" reads a standalone draft, whose every
// tensor must be a draft tensor. Throws ember::Error "<file>: <problem>" on the first problem.
DFlashInfo read_dflash(const gguf::File& file, const std::string& prefix, const DFlashTarget& target,
                       const DFlashWarning& warn = {});
DFlashInfo read_dflash(const gguf::File& file, const std::string& prefix, int64_t target_n_embd, int64_t target_n_layer,
                       int64_t n_vocab, const DFlashWarning& warn = {});

// The embedded draft of a target or drafted file, validated against the file's own target; nullopt when the file
// carries none. Throws like read_dflash.
std::optional<DFlashInfo> find_dflash(const gguf::File& target_or_drafted, const DFlashWarning& warn = {});

// How the one reader of the dflash.* keys treats them.
enum class DFlashKeys {
    // The first step of read_dflash: every required key present, each value in range, the head shapes consistent;
    // throws "<file>: key 'dflash.x' ..." on the first problem. target_layers and the mask id are left to read_dflash,
    // which checks them against the target.
    checked,
    // For showing a draft that may be broken or has no target at hand: a missing key leaves its field 0 / empty /
    // -1 and nothing is range-checked; only the shape keys are read (not the epsilon, RoPE base or sliding window),
    // and target_layers and the mask id when present. Never throws for a missing key, only for a key of the wrong
    // type.
    as_found,
};

// The dflash.* keys alone (no target, no tensors), e.g. of a standalone draft; prefix by is_standalone_draft.
DFlashInfo read_dflash_keys(const gguf::File& file, DFlashKeys how);

// The mask id a file names (§5 steps 1, 2, 5): dflash.mask_token_id, else tokenizer.ggml.mask_token_id; nullopt
// when neither is there. Throws for a value that is not an integer in [0, 2^31).
std::optional<int64_t> dflash_mask_token(const gguf::File& file, const DFlashWarning& warn = {});

}  // namespace ember::model
