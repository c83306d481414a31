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
    o.speculation = parse_speculation_request(speculation);
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
        ASSERT_EQ(model->speculation(), Speculation::mtp);
        GenerationOptions options;
        options.max_tokens = 500;
        options.ignore_end_of_generation = true;
        const GenerationResult plain = generate(model, false, 0, options, kPrompt);
        ASSERT_EQ(plain.tokens.size(), 500u);
        for (int length : {1, 3, 8, 0}) {  // fixed lengths force rollbacks of every size; 0 is the adaptive rule
            const GenerationResult spec = generate(model, true, length, options, kPrompt);
            EXPECT_EQ(spec.tokens, plain.tokens) << file << " draft length " << length;
            EXPECT_EQ(spec.stats.speculation, Speculation::mtp);
            if (length > 0) {
                EXPECT_GT(spec.stats.draft_steps, 0) << file;
            }
        }
    }
}

// Every emitted token is the target's own draw, so the output distribution is plain sampling's. Compares the
// frequencies of the tokens at each step over many seeds (a test that fails if drafts leak into the output); with
// the same seed, the draws are even the same.
void expect_plain_sampling(const std::shared_ptr<LoadedModel>& model, uint64_t seeds, int draft_length) {
    GenerationOptions options;
    options.max_tokens = 12;
    options.ignore_end_of_generation = true;
    options.sampling.temperature = 1.0f;
    options.sampling.top_k = 0;
    options.sampling.top_p = 1.0f;
    options.sampling.min_p = 0.0f;
    std::map<std::pair<int, int32_t>, int> plain_counts, spec_counts;
    for (uint64_t seed = 1; seed <= seeds; ++seed) {
        options.sampling.seed = seed;
        const GenerationResult plain = generate(model, false, 0, options, kPrompt);
        const GenerationResult spec = generate(model, true, draft_length, options, kPrompt);
        EXPECT_EQ(spec.tokens, plain.tokens) << "seed " << seed;
        for (size_t i = 0; i < plain.tokens.size(); ++i) ++plain_counts[{static_cast<int>(i), plain.tokens[i]}];
        for (size_t i = 0; i < spec.tokens.size(); ++i) ++spec_counts[{static_cast<int>(i), spec.tokens[i]}];
    }
    EXPECT_EQ(plain_counts, spec_counts);
    EXPECT_GT(plain_counts.size(), 12u);  // the draws really vary
}

TEST(Speculative, SampledTokensFollowThePlainDistribution) {
    expect_plain_sampling(load(fixture_path("qwen35moe") / "qwen35moe-f32.gguf"), 60, 4);
}

TEST(Speculative, ForcingAMissingMethodIsAnError) {
    try {
        load(fixture_path("qwen35moe") / "qwen35moe-nomtp-f32.gguf", "mtp");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("has no MTP head"), std::string::npos) << e.what();
    }
    EXPECT_EQ(load(fixture_path("qwen35moe") / "qwen35moe-nomtp-f32.gguf")->speculation(), Speculation::none);
    EXPECT_EQ(load(fixture_path("qwen35moe") / "qwen35moe-f32.gguf", "off")->speculation(), Speculation::none);
}

namespace {

std::filesystem::path dflash(const std::string& name) { return fixture_path("dflash") / name; }

std::shared_ptr<LoadedModel> load_with_draft(const std::filesystem::path& target, const std::filesystem::path& draft) {
    LoadOptions o;
    o.threads = 2;
    o.draft_file = draft;
    return LoadedModel::load(target, o);
}

GenerationOptions greedy(int max_tokens) {
    GenerationOptions options;
    options.max_tokens = max_tokens;
    options.ignore_end_of_generation = true;
    return options;
}

// Greedy decoding with the draft at several fixed lengths and the adaptive rule equals plain decoding.
void expect_lossless(const std::shared_ptr<LoadedModel>& model, const std::string& what, int max_tokens) {
    ASSERT_EQ(model->speculation(), Speculation::dflash) << what;
    const GenerationResult plain = generate(model, false, 0, greedy(max_tokens), kPrompt);
    ASSERT_EQ(plain.tokens.size(), static_cast<size_t>(max_tokens));
    for (int length : {1, 3, 7, 0}) {
        const GenerationResult spec = generate(model, true, length, greedy(max_tokens), kPrompt);
        EXPECT_EQ(spec.tokens, plain.tokens) << what << " draft length " << length;
        EXPECT_EQ(spec.stats.speculation, Speculation::dflash);
        EXPECT_GT(spec.stats.draft_steps, 0) << what;
    }
}

}  // namespace

TEST(Speculative, EmbeddedDflashGreedyIsTokenForTokenPlainDecoding) {
    for (const char* file : {"qwen3-drafted.gguf", "qwen3-b16-drafted.gguf", "qwen35moe-drafted.gguf",
                             "echo-agree-drafted.gguf", "shift-agree-drafted.gguf", "echo-never-drafted.gguf"})
        expect_lossless(load(dflash(file)), file, 500);
}

TEST(Speculative, SeparateDraftFileGreedyIsTokenForTokenPlainDecoding) {
    expect_lossless(load_with_draft(dflash("qwen3-f32.gguf"), dflash("draft-qwen3.gguf")), "qwen3 + draft", 500);
    expect_lossless(load_with_draft(dflash("qwen35moe-f32.gguf"), dflash("draft-qwen35moe-b16.gguf")),
                    "qwen35moe + draft", 500);
    // A separate draft wins over the model's own MTP head.
    EXPECT_EQ(load_with_draft(dflash("qwen35moe-f32.gguf"), dflash("draft-qwen35moe.gguf"))->speculation(), Speculation::dflash);
}

TEST(Speculative, AcceptanceFollowsHowTheDraftWasBuilt) {
    const int n = 120;
    // echo-agree: every drafted token agrees, so each step commits its whole draft plus the target's token.
    const GenerationResult all = generate(load(dflash("echo-agree-drafted.gguf")), true, 7, greedy(n), kPrompt);
    EXPECT_EQ(all.stats.accepted_tokens, all.stats.drafted_tokens);
    EXPECT_GT(all.stats.mean_accepted_length(), 7.0);
    // shift-agree: exactly the first drafted token agrees.
    const GenerationResult first = generate(load(dflash("shift-agree-drafted.gguf")), true, 7, greedy(n), kPrompt);
    EXPECT_EQ(first.stats.accepted_tokens, first.stats.draft_steps);
    // echo-never: nothing agrees, and the adaptive rule backs off to few draft steps.
    const GenerationResult never = generate(load(dflash("echo-never-drafted.gguf")), true, 0, greedy(n), kPrompt);
    EXPECT_EQ(never.stats.accepted_tokens, 0);
    EXPECT_LT(never.stats.draft_steps, n / 3);  // timing-driven; draft_controller_test pins the rule down
}

TEST(Speculative, SampledTokensWithDflashFollowThePlainDistribution) {
    expect_plain_sampling(load(dflash("qwen3-drafted.gguf")), 40, 3);
}

TEST(Speculative, BadDraftsAreOneLineErrorsAtLoad) {
    const std::filesystem::path bad = fixture_path("dflash") / "bad";
    for (const char* name : {"no_mask_token.gguf", "mask_outside_vocab.gguf", "width_mismatch.gguf"}) {
        try {
            load(bad / name);
            ADD_FAILURE() << name << " loaded";
        } catch (const Error& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find((bad / name).string()), std::string::npos) << what;
            EXPECT_EQ(what.find('\n'), std::string::npos) << what;
            if (std::string(name).find("mask") != std::string::npos) {
                EXPECT_NE(what.find("drafting would silently do nothing"), std::string::npos) << what;
            }
        }
    }
    // Asking for a DFlash draft the file does not have.
    try {
        load(dflash("qwen3-f32.gguf"), "dflash");
        ADD_FAILURE() << "no draft, yet loaded";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("has no DFlash draft"), std::string::npos) << e.what();
    }
    // speculation "off" ignores even a broken draft.
    EXPECT_EQ(load(bad / "width_mismatch.gguf", "off")->speculation(), Speculation::none);
}
