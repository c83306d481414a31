// SPDX-License-Identifier: MIT
// Speculative decoding is lossless: with the model's MTP head (and, in dflash tests, an embedded draft), greedy
// output is token for token that of plain decoding, and seeded sampling draws the same tokens.
#include <gtest/gtest.h>

#include <map>

#include "common/fixture_path.h"
#include "ember/runtime.h"

using namespace ember;
using ember::test::fixture_path;

namespace {

std::shared_ptr<LoadedModel> load(const std::filesystem::path& path, const std::string& speculation = "auto") {
    LoadOptions o;
    o.threads = 2;
    o.speculation = speculation;
    return LoadedModel::load(path, o);
}

GenerationResult generate(const std::shared_ptr<LoadedModel>& model, bool speculate, int draft_length,
                          const GenerationOptions& options, std::span<const int32_t> prompt) {
    SessionOptions so;
    so.n_ctx = 1024;
    so.speculate = speculate;
    so.draft_length = draft_length;
    Session session(model, so);
    return session.generate(prompt, options);
}

const std::vector<int32_t> kPrompt = {260, 72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100, 33};

}  // namespace

TEST(Speculative, MtpGreedyIsTokenForTokenPlainDecoding) {
    for (const char* file : {"qwen35moe-f32.gguf", "qwen35moe-q8_0.gguf"}) {
        auto model = load(fixture_path("qwen35moe") / file);
        ASSERT_EQ(model->speculation(), "mtp");
        GenerationOptions options;
        options.max_tokens = 500;
        options.ignore_end_of_generation = true;
        const GenerationResult plain = generate(model, false, 0, options, kPrompt);
        ASSERT_EQ(plain.tokens.size(), 500u);
        for (int length : {1, 3, 8, 0}) {  // fixed lengths force rollbacks of every size; 0 is the adaptive rule
            const GenerationResult spec = generate(model, true, length, options, kPrompt);
            EXPECT_EQ(spec.tokens, plain.tokens) << file << " draft length " << length;
            EXPECT_EQ(spec.stats.speculation, "mtp");
            if (length > 0) {
                EXPECT_GT(spec.stats.draft_steps, 0) << file;
            }
        }
    }
}

TEST(Speculative, SampledTokensFollowThePlainDistribution) {
    auto model = load(fixture_path("qwen35moe") / "qwen35moe-f32.gguf");
    GenerationOptions options;
    options.max_tokens = 12;
    options.ignore_end_of_generation = true;
    options.sampling.temperature = 1.0f;
    options.sampling.top_k = 0;
    options.sampling.top_p = 1.0f;
    options.sampling.min_p = 0.0f;
    // Every emitted token is the target's own draw, so the output distribution is plain sampling's. Compare the
    // frequencies of the tokens at each step over many seeds (a test that fails if drafts leak into the output).
    std::map<std::pair<int, int32_t>, int> plain_counts, spec_counts;
    for (uint64_t seed = 1; seed <= 60; ++seed) {
        options.sampling.seed = seed;
        const GenerationResult plain = generate(model, false, 0, options, kPrompt);
        const GenerationResult spec = generate(model, true, 4, options, kPrompt);
        EXPECT_EQ(spec.tokens, plain.tokens) << "seed " << seed;
        for (size_t i = 0; i < plain.tokens.size(); ++i) ++plain_counts[{static_cast<int>(i), plain.tokens[i]}];
        for (size_t i = 0; i < spec.tokens.size(); ++i) ++spec_counts[{static_cast<int>(i), spec.tokens[i]}];
    }
    EXPECT_EQ(plain_counts, spec_counts);
    EXPECT_GT(plain_counts.size(), 12u);  // the draws really vary
}

TEST(Speculative, ForcingAMissingMethodIsAnError) {
    try {
        load(fixture_path("qwen35moe") / "qwen35moe-nomtp-f32.gguf", "mtp");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("has no MTP head"), std::string::npos) << e.what();
    }
    EXPECT_EQ(load(fixture_path("qwen35moe") / "qwen35moe-nomtp-f32.gguf")->speculation(), "none");
    EXPECT_EQ(load(fixture_path("qwen35moe") / "qwen35moe-f32.gguf", "off")->speculation(), "none");
}
