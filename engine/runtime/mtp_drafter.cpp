// SPDX-License-Identifier: MIT
// The MTP drafter: draft tokens from the model's own multi-token-prediction head.
#include <algorithm>

#include "runtime/drafter.h"

namespace ember::runtime {

namespace {

int32_t argmax(std::span<const float> v) {
    return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

class MtpDrafter final : public Drafter {
public:
    MtpDrafter(const MtpHead& head, int64_t n_ctx, int64_t n_embd) : head_(head), n_embd_(n_embd) {
        StateOptions options;
        options.n_ctx = n_ctx + kMaxDraft + 1;
        state_ = head.create_state(options);
    }

    Speculation method() const override { return Speculation::mtp; }
    int max_draft() const override { return kMaxDraft; }
    int start_draft() const override { return 1; }  // verifying is dear on MoE targets: grow from one
    bool needs_hidden() const override { return true; }
    size_t memory_bytes() const override { return state_->memory_bytes(); }

    void observe(const TargetRows& rows) override {
        const int64_t n = static_cast<int64_t>(rows.tokens.size());
        if (n == 0) return;
        // Row k of the head pairs token k with the hidden state of the position before it: row 0 needs the
        // pending hidden state of the last observed position.
        int64_t first = 0;
        if (pending_position_ < 0 || pending_position_ != rows.first_position - 1) first = 1;  // no hidden state for the position before
        if (first < n) {
            const int64_t position = rows.first_position + first;
            if (state_->position() != position && state_->truncate(position) != position) state_->truncate(0);
            pairs_.clear();
            if (first == 0) pairs_.insert(pairs_.end(), pending_.begin(), pending_.end());
            pairs_.insert(pairs_.end(), rows.hidden.begin(), rows.hidden.begin() + (n - 1) * n_embd_);
            head_.forward(*state_, rows.tokens.subspan(static_cast<size_t>(first)), pairs_,
                          static_cast<int32_t>(position), logits_, out_, false);
        }
        pending_.assign(rows.hidden.end() - n_embd_, rows.hidden.end());
        pending_position_ = rows.first_position + n - 1;
    }

    std::vector<int32_t> draft(int32_t last, int64_t position, int n) override {
        std::vector<int32_t> drafted;
        if (n <= 0 || pending_position_ < 0 || pending_position_ != position - 1) return drafted;
        if (state_->position() != position && state_->truncate(position) != position) return drafted;
        std::vector<float> h = pending_;
        int32_t token = last;
        for (int i = 0; i < n; ++i) {
            const int32_t one[1] = {token};
            head_.forward(*state_, one, h, static_cast<int32_t>(position + i), logits_, out_);
            token = argmax(logits_);
            drafted.push_back(token);
            h = out_;
        }
        // The drafting rows are not context: the verified rows replace them.
        state_->truncate(position);
        return drafted;
    }

    void truncate(int64_t n) override {
        state_->truncate(n);
        if (pending_position_ > n - 1) pending_position_ = -1;  // that position is gone
    }

private:
    static constexpr int kMaxDraft = 8;
    const MtpHead& head_;
    int64_t n_embd_;
    std::unique_ptr<SequenceState> state_;
    std::vector<float> pending_;  // the target's hidden state at pending_position_
    int64_t pending_position_ = -1;
    std::vector<float> pairs_, logits_, out_;
};

}  // namespace

std::unique_ptr<Drafter> make_mtp_drafter(const MtpHead& head, int64_t n_ctx, int64_t n_embd) {
    return std::make_unique<MtpDrafter>(head, n_ctx, n_embd);
}

}  // namespace ember::runtime
