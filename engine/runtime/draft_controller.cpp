// SPDX-License-Identifier: MIT
// Choosing each step's draft length from the measured costs and acceptance.
#include "runtime/draft_controller.h"

#include <algorithm>

namespace ember::runtime {

namespace {
constexpr int kWarmupPlainSteps = 4;  // measure t_1 first (the median drops the cold first step)
constexpr int kFirstProbeGap = 16;    // plain steps before the first probe once speculation stops paying
constexpr int kLastProbeGap = 512;    // probes that keep failing are spaced out up to this
constexpr double kMargin = 1.05;
}  // namespace

DraftController::DraftController(int max_draft, int start_draft, int fixed)
    : max_(std::max(max_draft, 0)), start_(std::clamp(start_draft, 1, std::max(max_draft, 1))), fixed_(fixed),
      tv_(static_cast<size_t>(max_ + 2), 0.0), td_(static_cast<size_t>(max_ + 1), 0.0),
      tried_(static_cast<size_t>(max_ + 1), 0.0), accepted_(static_cast<size_t>(max_ + 1), 0.0) {}

double DraftController::alpha(int i) const {
    // Laplace-smoothed acceptance of position i given the earlier ones were accepted.
    return (accepted_[static_cast<size_t>(i)] + 1.0) / (tried_[static_cast<size_t>(i)] + 2.0);
}

double DraftController::expected_tokens(int n) const {
    double e = 1.0, chain = 1.0;
    for (int i = 1; i <= n; ++i) e += (chain *= alpha(i));
    return e;
}

double DraftController::rate(int n) const {
    if (n == 0) return t1_ > 0 ? 1.0 / t1_ : 0.0;
    const double td = td_[static_cast<size_t>(n)], tv = tv_[static_cast<size_t>(n + 1)];
    return td > 0 && tv > 0 ? expected_tokens(n) / (td + tv) : 0.0;
}

int DraftController::choose() {
    ++steps_;
    if (max_ == 0) return last_ = 0;
    if (fixed_ > 0) return last_ = std::min(fixed_, max_);
    if (plain_steps_ < kWarmupPlainSteps) return last_ = 0;
    // The best measured length; an unmeasured neighbour of it is tried now and then.
    int best = 0;
    for (int n = 1; n <= max_; ++n)
        if (rate(n) > rate(best)) best = n;
    if (best == 0) {
        bool any_measured = false;
        for (int n = 1; n <= max_; ++n) any_measured = any_measured || rate(n) > 0;
        if (!any_measured) return last_ = start_;
    }
    const bool pays = best > 0 && rate(best) >= kMargin * rate(0);
    if (pays) {
        probe_gap_ = kFirstProbeGap;
        const int next = best + 1;
        if (next <= max_ && rate(next) == 0 && steps_ % 2 == 0 && alpha(best) > 0.5) return last_ = next;
        return last_ = best;
    }
    // Speculation does not pay now: decode plainly, and probe again now and then since acceptance changes (text
    // turns into code, a quote repeats). Each probe that does not pay doubles the gap to the next, and a probe
    // drafts one token unless some length has been measured to come close, so a draft that never agrees costs a
    // fraction of a percent.
    if (++since_probe_ >= probe_gap_) {
        since_probe_ = 0;
        probe_gap_ = std::min(2 * probe_gap_, kLastProbeGap);
        return last_ = best > 0 ? best : 1;
    }
    return last_ = 0;
}

void DraftController::record_plain(double seconds) {
    // The median of the recent plain steps: the first, cold steps (and a stray slow one) must not make drafting
    // look cheaper than it is.
    recent_plain_[static_cast<size_t>(plain_steps_) % recent_plain_.size()] = seconds;
    ++plain_steps_;
    const size_t n = std::min(recent_plain_.size(), static_cast<size_t>(plain_steps_));
    std::array<double, kRecentPlain> sorted{};
    std::copy_n(recent_plain_.begin(), n, sorted.begin());
    std::nth_element(sorted.begin(), sorted.begin() + n / 2, sorted.begin() + n);
    t1_ = sorted[n / 2];
}

void DraftController::record_speculative(int drafted, int accepted, double draft_seconds, double verify_seconds) {
    if (drafted <= 0 || drafted > max_) return;
    // A probe that agreed wants more evidence soon: the smoothed acceptance of a few samples undersells a draft
    // that always agrees. One that agreed in part is looked at again after the first gap.
    if (accepted == drafted) probe_gap_ = 1;
    else if (accepted > 0) probe_gap_ = std::min(probe_gap_, kFirstProbeGap);
    td_[static_cast<size_t>(drafted)] = ema(td_[static_cast<size_t>(drafted)], draft_seconds);
    tv_[static_cast<size_t>(drafted + 1)] = ema(tv_[static_cast<size_t>(drafted + 1)], verify_seconds);
    for (int i = 1; i <= drafted; ++i) {
        tried_[static_cast<size_t>(i)] += 1;
        if (i <= accepted) {
            accepted_[static_cast<size_t>(i)] += 1;
        } else {
            break;  // later positions were not tried given an earlier rejection
        }
    }
}

}  // namespace ember::runtime
