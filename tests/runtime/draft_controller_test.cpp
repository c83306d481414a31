// SPDX-License-Identifier: MIT
// The adaptive draft length (runtime/draft_controller) on synthetic timings: a draft that never agrees costs a few
// probes whose gaps keep doubling; one that always agrees is used at its longest paying length; a cold first
// plain step does not make drafting look cheap.
#include <gtest/gtest.h>

#include "runtime/draft_controller.h"

using ember::runtime::DraftController;

namespace {

// Runs `steps` decoding steps with a plain step of 1 s, drafting n costing 0.05 n s and verifying m tokens
// 0.9 + 0.1 m s (a memory-bound target); accepted(n) says how many drafts agree. Returns the draft steps taken.
template <typename Accepted>
int simulate(DraftController& c, int steps, Accepted accepted, int* last_length = nullptr, double verify_per_token = 0.1) {
    int drafting = 0;
    for (int i = 0; i < steps; ++i) {
        const int n = c.choose();
        if (n == 0) {
            c.record_plain(i == 0 ? 5.0 : 1.0);  // the first step is cold
            continue;
        }
        ++drafting;
        c.record_speculative(n, accepted(n), 0.05 * n, 1.0 - verify_per_token + verify_per_token * (n + 1));
        if (last_length) *last_length = n;
    }
    return drafting;
}

}  // namespace

TEST(DraftController, ANeverAgreeingDraftIsProbedRarely) {
    DraftController c(7, 4);
    const int probes = simulate(c, 1000, [](int) { return 0; });
    EXPECT_GE(probes, 3);  // it keeps looking, since acceptance can change
    EXPECT_LE(probes, 9);  // gaps of 16, 32, ... 512 plain steps
}

TEST(DraftController, AnAlwaysAgreeingDraftRunsLong) {
    DraftController c(7, 4);
    int last = 0;
    const int steps = simulate(c, 300, [](int n) { return n; }, &last);
    EXPECT_GE(steps, 250);
    EXPECT_EQ(last, 7);  // verifying more is cheap here, so the longest draft pays best
    EXPECT_GT(c.rate(7), 1.05 * c.rate(0));
}

TEST(DraftController, AnAlwaysAgreeingDraftIsFoundOnACpuLikeTarget) {
    // Verifying m tokens costs 0.35 + 0.65 m plain steps (a compute-bound CPU): drafting pays only once the
    // acceptance is known to be high, which the first probe alone cannot show.
    DraftController c(7, 4);
    const int steps = simulate(c, 300, [](int n) { return n; }, nullptr, 0.65);
    EXPECT_GE(steps, 285) << steps;  // 266 when a successful probe waits out the doubled gap
}

TEST(DraftController, AFixedLengthIsAlwaysUsed) {
    DraftController c(7, 4, 3);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(c.choose(), 3);
}

TEST(DraftController, ExpectedTokensFollowTheAcceptance) {
    DraftController c(4, 2, 4);
    for (int i = 0; i < 100; ++i) c.record_speculative(4, 2, 0.1, 1.0);  // the first two always, never the third
    EXPECT_NEAR(c.expected_tokens(2), 3.0, 0.05);
    EXPECT_NEAR(c.expected_tokens(4), 3.0, 0.05);
}
