// SPDX-License-Identifier: MIT
// The DFlash drafter: a block of draft tokens from the target's captured features.
#include "runtime/drafter.h"

namespace ember::runtime {

namespace {

class DFlashDrafter final : public Drafter {
public:
    DFlashDrafter(const DraftModel& draft, int64_t n_ctx) : draft_(draft) {
        StateOptions options;
        options.n_ctx = n_ctx + 1;
        state_ = draft.create_state(options);
    }

    Speculation method() const override { return Speculation::dflash; }
    int max_draft() const override { return static_cast<int>(draft_.block_size() - 1); }
    int start_draft() const override { return std::min(4, max_draft()); }
    std::span<const int64_t> feature_layers() const override { return draft_.target_layers(); }
    size_t memory_bytes() const override { return state_->memory_bytes(); }

    void observe(const TargetRows& rows) override {
        if (rows.tokens.empty()) return;
        draft_.inject(*state_, rows.features, rows.first_position);  // rows before first_position may be missing
    }

    std::vector<int32_t> draft(int32_t last, int64_t position, int n) override {
        return draft_.draft(*state_, last, position, n);
    }

    void truncate(int64_t n) override { state_->truncate(n); }

private:
    const DraftModel& draft_;
    std::unique_ptr<SequenceState> state_;
};

}  // namespace

std::unique_ptr<Drafter> make_dflash_drafter(const DraftModel& draft, int64_t n_ctx) {
    return std::make_unique<DFlashDrafter>(draft, n_ctx);
}

}  // namespace ember::runtime
