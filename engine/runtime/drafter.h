// SPDX-License-Identifier: MIT
// A source of draft tokens for speculative decoding (../shared/specs/speculative.md). The session feeds it every
// row the target processes, asks it for drafts, and tells it where the sequence was cut back.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "model/model.h"
#include "ember/runtime.h"

namespace ember::runtime {

// What the target computed for a batch of tokens it processed.
struct TargetRows {
    std::span<const int32_t> tokens;
    int64_t first_position = 0;
    std::span<const float> hidden;    // [n, n_embd] after the final norm (when the drafter asks for it)
    std::span<const float> features;  // [n, layers * n_embd] layer inputs (when the drafter asks for them)
};

class Drafter {
public:
    virtual ~Drafter() = default;
    virtual Speculation method() const = 0;
    virtual int max_draft() const = 0;            // the longest draft one step can make
    virtual int start_draft() const = 0;          // the draft length that seeds the measurements
    // What the target must hand over for every processed row.
    virtual bool needs_hidden() const { return false; }
    virtual std::span<const int64_t> feature_layers() const { return {}; }
    // The target processed these rows (and keeps them).
    virtual void observe(const TargetRows& rows) = 0;
    // Up to n tokens to follow `last`, which sits at `position` and is not processed by the target yet.
    virtual std::vector<int32_t> draft(int32_t last, int64_t position, int n) = 0;
    // The target forgot positions >= n.
    virtual void truncate(int64_t n) = 0;
    // Whether rows may be left out of the drafter's context (it then has gaps): the session allows it after a draft
    // that agreed with nothing, when handing every row over costs time that drafting does not win back.
    virtual void limit_context(bool limited) { (void)limited; }
    virtual size_t memory_bytes() const = 0;
};

// The model's own MTP head (speculative.md §2): its context pairs each token with the target's hidden state at the
// position before; drafting chains the head's own outputs.
std::unique_ptr<Drafter> make_mtp_drafter(const MtpHead& head, int64_t n_ctx, int64_t n_embd);

// A DFlash draft (speculative.md §3): its context is the target's features of every processed row; one pass
// drafts a whole block.
std::unique_ptr<Drafter> make_dflash_drafter(const DraftModel& draft, int64_t n_ctx);

// Wraps a drafter (one that copes with gaps in its context) so that observed rows are handed over in batches, when
// a draft is asked for. With a full context, flush_rows pending rows are handed over at once; with a limited one
// (limit_context(true), or limited_at_start) only the latest window_rows..2*window_rows rows are kept.
std::unique_ptr<Drafter> buffer_observations(std::unique_ptr<Drafter> inner, int64_t flush_rows, int64_t window_rows,
                                             bool limited_at_start);

}  // namespace ember::runtime
