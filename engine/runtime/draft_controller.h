// SPDX-License-Identifier: MIT
// Chooses each step's draft length from measurements so that speculation is never slower than plain decoding
// (../shared/specs/speculative.md §7): with t_1 the time of a plain decode step, t_v(m) of verifying m tokens,
// t_d(n) of drafting n, and alpha_i the chance that draft position i is accepted after positions < i were,
//   E(n) = 1 + sum_i prod_{j<=i} alpha_j,   R(n) = E(n) / (t_d(n) + t_v(n + 1)),   R(0) = 1 / t_1,
// and speculates with n* = argmax R only if R(n*) >= 1.05 R(0). While plain, it probes again after 16 steps, then
// after twice as many each time a probe does not pay (up to 512); a probe whose drafts all agreed is followed by
// another at once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::runtime {

class DraftController {
public:
    // fixed > 0: always that length (no adaptation); fixed == 0: adaptive up to max_draft.
    DraftController(int max_draft, int start_draft, int fixed = 0);

    int choose();
    void record_plain(double seconds);
    void record_speculative(int drafted, int accepted, double draft_seconds, double verify_seconds);

    double expected_tokens(int n) const;  // E(n)
    double rate(int n) const;             // R(n) in tokens per second (0 when not measured)
    int last_choice() const { return last_; }

private:
    static double ema(double old, double sample) { return old <= 0 ? sample : 0.8 * old + 0.2 * sample; }
    double alpha(int i) const;

    int max_;
    int start_;
    int fixed_;
    int last_ = 0;
    static constexpr size_t kRecentPlain = 9;
    std::array<double, kRecentPlain> recent_plain_{};
    double t1_ = 0;
    std::vector<double> tv_;  // by verified length m = n + 1
    std::vector<double> td_;  // by draft length n
    std::vector<double> tried_, accepted_;  // per draft position i (1-based)
    int plain_steps_ = 0;
    int since_probe_ = 0;
    int probe_gap_ = 16;
    int steps_ = 0;
};

}  // namespace ember::runtime
