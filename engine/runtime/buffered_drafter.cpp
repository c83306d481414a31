// SPDX-License-Identifier: MIT
// Drafters see every row the target processes, but while the controller decodes plainly nobody asks them for
// drafts. Rows are therefore kept here and handed over in one batch when a draft is asked for (or when many have
// gathered), so plain steps cost a copy instead of a draft forward each. While the context is limited (drafts have
// stopped agreeing) only the latest rows are kept: after a long plain stretch a probe then costs a short batch, not
// one as long as the stretch, and a draft that never agrees costs next to nothing between probes.
#include "runtime/drafter.h"

#include <algorithm>

namespace ember::runtime {

namespace {


class BufferedDrafter final : public Drafter {
public:
    BufferedDrafter(std::unique_ptr<Drafter> inner, int64_t flush_rows, int64_t window_rows, bool limited)
        : inner_(std::move(inner)), flush_rows_(std::max<int64_t>(flush_rows, 1)),
          window_rows_(std::max<int64_t>(window_rows, 1)), limited_(limited) {}

    Speculation method() const override { return inner_->method(); }
    int max_draft() const override { return inner_->max_draft(); }
    int start_draft() const override { return inner_->start_draft(); }
    bool needs_hidden() const override { return inner_->needs_hidden(); }
    std::span<const int64_t> feature_layers() const override { return inner_->feature_layers(); }
    size_t memory_bytes() const override { return inner_->memory_bytes(); }

    void observe(const TargetRows& rows) override {
        if (rows.tokens.empty()) return;
        if (!tokens_.empty() && rows.first_position != end()) flush();  // not contiguous: keep the order exact
        if (tokens_.empty()) first_ = rows.first_position;
        tokens_.insert(tokens_.end(), rows.tokens.begin(), rows.tokens.end());
        hidden_.insert(hidden_.end(), rows.hidden.begin(), rows.hidden.end());
        features_.insert(features_.end(), rows.features.begin(), rows.features.end());
        const auto pending = static_cast<int64_t>(tokens_.size());
        if (limited_ && pending >= 2 * window_rows_) drop_oldest(static_cast<size_t>(pending - window_rows_));
        else if (!limited_ && pending >= flush_rows_) flush();
    }

    void limit_context(bool limited) override {
        limited_ = limited;
        inner_->limit_context(limited);
    }

    std::vector<int32_t> draft(int32_t last, int64_t position, int n) override {
        flush();
        return inner_->draft(last, position, n);
    }

    void truncate(int64_t n) override {
        if (!tokens_.empty() && n >= first_) {  // the inner drafter holds only positions before first_
            cut(static_cast<size_t>(std::min<int64_t>(n - first_, static_cast<int64_t>(tokens_.size()))));
            return;
        }
        tokens_.clear();
        hidden_.clear();
        features_.clear();
        inner_->truncate(n);
    }

private:
    int64_t end() const { return first_ + static_cast<int64_t>(tokens_.size()); }

    // Keeps the first `rows` pending rows.
    void cut(size_t rows) {
        if (rows == tokens_.size()) return;
        const size_t h = hidden_.size() / tokens_.size(), f = features_.size() / tokens_.size();
        tokens_.resize(rows);
        hidden_.resize(rows * h);
        features_.resize(rows * f);
    }

    // Forgets the first `rows` pending rows; the inner drafter then sees a gap before the rest.
    void drop_oldest(size_t rows) {
        const size_t h = hidden_.size() / tokens_.size(), f = features_.size() / tokens_.size();
        tokens_.erase(tokens_.begin(), tokens_.begin() + static_cast<std::ptrdiff_t>(rows));
        hidden_.erase(hidden_.begin(), hidden_.begin() + static_cast<std::ptrdiff_t>(rows * h));
        features_.erase(features_.begin(), features_.begin() + static_cast<std::ptrdiff_t>(rows * f));
        first_ += static_cast<int64_t>(rows);
    }

    void flush() {
        if (tokens_.empty()) return;
        inner_->observe({tokens_, first_, hidden_, features_});
        tokens_.clear();
        hidden_.clear();
        features_.clear();
    }

    std::unique_ptr<Drafter> inner_;
    int64_t flush_rows_;
    int64_t window_rows_;
    bool limited_;
    int64_t first_ = 0;
    std::vector<int32_t> tokens_;
    std::vector<float> hidden_, features_;
};

}  // namespace

std::unique_ptr<Drafter> buffer_observations(std::unique_ptr<Drafter> inner, int64_t flush_rows, int64_t window_rows,
                                             bool limited_at_start) {
    return std::make_unique<BufferedDrafter>(std::move(inner), flush_rows, window_rows, limited_at_start);
}

}  // namespace ember::runtime
