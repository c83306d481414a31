// SPDX-License-Identifier: MIT
// Drafters see every row the target processes, but while the controller decodes plainly nobody asks them for
// drafts. Rows are therefore kept here and handed over in one batch when a draft is asked for (or when many have
// gathered), so plain steps cost a copy instead of a draft forward each.
#include "runtime/drafter.h"

namespace ember::runtime {

namespace {

constexpr int64_t kMaxPendingRows = 256;

class BufferedDrafter final : public Drafter {
public:
    explicit BufferedDrafter(std::unique_ptr<Drafter> inner) : inner_(std::move(inner)) {}

    std::string_view method() const override { return inner_->method(); }
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
        if (static_cast<int64_t>(tokens_.size()) >= kMaxPendingRows) flush();
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

    void flush() {
        if (tokens_.empty()) return;
        inner_->observe({tokens_, first_, hidden_, features_});
        tokens_.clear();
        hidden_.clear();
        features_.clear();
    }

    std::unique_ptr<Drafter> inner_;
    int64_t first_ = 0;
    std::vector<int32_t> tokens_;
    std::vector<float> hidden_, features_;
};

}  // namespace

std::unique_ptr<Drafter> buffer_observations(std::unique_ptr<Drafter> inner) {
    return std::make_unique<BufferedDrafter>(std::move(inner));
}

}  // namespace ember::runtime
