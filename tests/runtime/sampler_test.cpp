// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "runtime/sampler.h"
#include "runtime/stop_strings.h"

using namespace ember;
using ember::runtime::Sampler;
using ember::runtime::StopStringFilter;

namespace {

// Temperature 1 and every filter off: the distribution is the softmax of the logits.
SamplingParams unfiltered() {
    SamplingParams p;
    p.temperature = 1.0f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    return p;
}

}  // namespace

TEST(Sampler, GreedyTakesTheArgmax) {
    Sampler s(SamplingParams{});
    std::vector<float> logits = {0.1f, 2.0f, -1.0f, 1.9f};
    EXPECT_EQ(s.sample(logits, {}), 1);
    EXPECT_EQ(s.distribution(logits).size(), 1u);
}

TEST(Sampler, FiltersKeepTheRightCandidates) {
    SamplingParams p = unfiltered();
    // Probabilities proportional to 8, 4, 2, 1, 1.
    const std::vector<float> logits = {std::log(8.f), std::log(4.f), std::log(2.f), std::log(1.f), std::log(1.f)};
    auto d = Sampler(p).distribution(logits);
    ASSERT_EQ(d.size(), 5u);
    EXPECT_NEAR(d[0].p, 0.5, 1e-6);
    p.top_k = 2;
    d = Sampler(p).distribution(logits);
    ASSERT_EQ(d.size(), 2u);
    EXPECT_NEAR(d[0].p, 2.0 / 3, 1e-6);
    p.top_k = 0;
    p.top_p = 0.7f;  // 0.5 + 0.25 reaches 0.7
    EXPECT_EQ(Sampler(p).distribution(logits).size(), 2u);
    p.top_p = 1.0f;
    p.min_p = 0.2f;  // keeps p >= 0.1: 0.5, 0.25, 0.125
    EXPECT_EQ(Sampler(p).distribution(logits).size(), 3u);
}

TEST(Sampler, SeededDrawsFollowTheDistribution) {
    SamplingParams p = unfiltered();
    p.seed = 99;
    Sampler s(p);
    const std::vector<float> logits = {std::log(3.f), std::log(1.f)};
    std::map<int, int> counts;
    for (int i = 0; i < 20000; ++i) {
        std::vector<float> l = logits;
        ++counts[s.sample(l, {})];
    }
    EXPECT_NEAR(counts[0] / 20000.0, 0.75, 0.015);
}

TEST(Sampler, Penalties) {
    SamplingParams p;
    p.repeat_penalty = 2.0f;
    p.presence_penalty = 0.5f;
    p.frequency_penalty = 0.25f;
    Sampler s(p);
    std::vector<float> logits = {4.0f, -4.0f, 1.0f};
    const std::vector<int32_t> recent = {0, 1, 1};
    s.apply_penalties(logits, recent);
    EXPECT_FLOAT_EQ(logits[0], 4.0f / 2 - 0.5f - 0.25f);
    EXPECT_FLOAT_EQ(logits[1], -4.0f * 2 - 0.5f - 0.5f);
    EXPECT_FLOAT_EQ(logits[2], 1.0f);
}

TEST(StopStrings, HoldsBackPrefixesAndCutsAtTheStop) {
    StopStringFilter f({"</end>", "STOP"});
    EXPECT_EQ(f.push("hello </e"), "hello ");
    EXPECT_EQ(f.push("n"), "");
    EXPECT_EQ(f.push("x and S"), "</enx and ");
    EXPECT_EQ(f.push("TOP more"), "");
    EXPECT_TRUE(f.stopped());
    EXPECT_EQ(f.push("later"), "");
    StopStringFilter g({"##"});
    EXPECT_EQ(g.push("a#"), "a");
    EXPECT_EQ(g.flush(), "#");
}
