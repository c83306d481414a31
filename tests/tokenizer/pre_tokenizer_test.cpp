// SPDX-License-Identifier: MIT
// The pieces under the tokenizer: UTF-8 scanning, the byte-level alphabet, the pre-tokenizer presets. (Their
// agreement with Hugging Face's pre-tokenizers is checked by tokenizer_hf_test.py.)
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <thread>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer_test_util.h"

namespace ember::test {
namespace {

using tokenizer::Utf8Status;

TEST(Utf8, ScanFindsValidInvalidAndTruncatedSequences) {
    const auto scan = [](std::string_view s) { return tokenizer::scan_utf8(s, 0); };
    EXPECT_EQ(scan("A").status, Utf8Status::valid);
    EXPECT_EQ(scan("\xE2\x82\xAC").length, 3u);
    EXPECT_EQ(scan("\xF0\x9F\xA6\x99").length, 4u);
    EXPECT_EQ(scan("\xE2\x82").status, Utf8Status::truncated);
    EXPECT_EQ(scan("\xE2\x82").length, 2u);
    EXPECT_EQ(scan("\xE2\x82"
                   "A")
                  .status,
              Utf8Status::invalid);
    EXPECT_EQ(scan("\xE2\x82"
                   "A")
                  .length,
              2u);
    EXPECT_EQ(scan("\xC0\x80").length, 1u);          // overlong lead
    EXPECT_EQ(scan("\xED\xA0\x80").length, 1u);      // surrogate
    EXPECT_EQ(scan("\xF4\x90\x80\x80").length, 1u);  // above U+10FFFF
    EXPECT_EQ(scan("\x80").status, Utf8Status::invalid);
}

TEST(Utf8, ReplacementFollowsTheMaximalSubpartRule) {
    // Expected strings as Python's bytes.decode("utf-8", errors="replace") gives them.
    const auto replaced = [](std::string_view s) {
        std::string out;
        tokenizer::append_replacing_invalid(s, out);
        return out;
    };
    const std::string fffd = "\xEF\xBF\xBD";
    EXPECT_EQ(replaced("a\xFF"
                       "b"),
              "a" + fffd + "b");
    EXPECT_EQ(replaced("\xE2\x82"
                       "A"),
              fffd + "A");
    EXPECT_EQ(replaced("\xC0\x80"), fffd + fffd);
    EXPECT_EQ(replaced("\xED\xA0\x80"), fffd + fffd + fffd);
    EXPECT_EQ(replaced("\xF0\x9F\xA6"), fffd);
    EXPECT_EQ(replaced("\xF0\x9F\xA6\x99"), "\xF0\x9F\xA6\x99");
}

TEST(ByteLevel, AlphabetIsGpt2s) {
    std::set<char32_t> seen;
    for (unsigned b = 0; b < 256; ++b) {
        const char32_t cp = tokenizer::byte_to_codepoint(static_cast<uint8_t>(b));
        EXPECT_TRUE(seen.insert(cp).second);
        EXPECT_EQ(tokenizer::codepoint_to_byte(cp), b);
    }
    EXPECT_EQ(tokenizer::byte_to_codepoint(' '), U'\u0120');   // Ġ
    EXPECT_EQ(tokenizer::byte_to_codepoint('\n'), U'\u010A');  // Ċ
    EXPECT_EQ(tokenizer::byte_to_codepoint('A'), U'A');
    EXPECT_EQ(tokenizer::byte_to_codepoint(0xAD), U'\u0143');  // the last of the 68 remapped bytes
    EXPECT_EQ(tokenizer::byte_to_codepoint(0xE9), U'\u00E9');
    EXPECT_EQ(tokenizer::codepoint_to_byte(U'\u0144'), std::nullopt);

    std::string all;
    for (unsigned b = 0; b < 256; ++b) all += static_cast<char>(b);
    EXPECT_EQ(tokenizer::byte_level_to_bytes(tokenizer::bytes_to_byte_level(all)), all);
    EXPECT_EQ(tokenizer::bytes_to_byte_level(" hi\n"), "\xC4\xA0hi\xC4\x8A");
    // Characters outside the alphabet pass through, as Hugging Face's ByteLevel decoder does.
    EXPECT_EQ(tokenizer::byte_level_to_bytes("\xE6\x97\xA5 x"), "\xE6\x97\xA5 x");
}

TEST(PreTokenizer, PatternsAreAdaptedForPcre2) {
    EXPECT_EQ(tokenizer::adapt_pattern_for_pcre2(R"(\s+(?!\S)|[^\s\p{L}])"),
              R"(\p{White_Space}+(?!\P{White_Space})|[^\p{White_Space}\p{L}])");
    EXPECT_EQ(tokenizer::adapt_pattern_for_pcre2(R"(\\s\p{N})"), R"(\\s\p{N})");  // an escaped backslash
}

std::vector<std::string> split(const tokenizer::PreTokenizer& pre, std::string_view text) {
    std::vector<std::string> pieces;
    for (const auto& p : pre.split(text)) pieces.emplace_back(text.substr(p.offset, p.length));
    return pieces;
}

using Pieces = std::vector<std::string>;

const tokenizer::PreTokenizer& qwen2_of() {
    static const tokenizer::PreTokenizer pre(*tokenizer::find_pre_tokenizer("qwen2"));
    return pre;
}

TEST(PreTokenizer, EveryNameFindsItsPresetAndNoOtherNameDoes) {
    const std::vector<std::string> names = tokenizer::pre_tokenizer_names();
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
    size_t named = 0;
    for (const auto& spec : tokenizer::pre_tokenizer_presets()) {
        EXPECT_EQ(tokenizer::find_pre_tokenizer(spec.name), &spec);
        for (std::string_view alias : spec.aliases) EXPECT_EQ(tokenizer::find_pre_tokenizer(alias), &spec) << alias;
        named += 1 + spec.aliases.size();
    }
    EXPECT_EQ(named, names.size());
    for (const char* unknown : {"", "grok-2", "GPT-2", "gpt-2 ", "llama", "default"})
        EXPECT_EQ(tokenizer::find_pre_tokenizer(unknown), nullptr) << unknown;
}

TEST(PreTokenizer, KnownSplits) {
    const tokenizer::PreTokenizer gpt2(*tokenizer::find_pre_tokenizer("gpt-2"));
    EXPECT_EQ(split(gpt2, "Hello world's  3.14!!\n\n x"),
              (Pieces{"Hello", " world", "'s", " ", " 3", ".", "14", "!!", "\n\n", " x"}));
    const tokenizer::PreTokenizer qwen2(*tokenizer::find_pre_tokenizer("qwen2"));
    EXPECT_EQ(split(qwen2, "It'S 1234 ok\n\n  x"),
              (Pieces{"It", "'S", " ", "1", "2", "3", "4", " ok", "\n\n", " ", " x"}));
    const tokenizer::PreTokenizer llama3(*tokenizer::find_pre_tokenizer("llama3"));
    EXPECT_EQ(split(llama3, "12345 abc"), (Pieces{"123", "45", " abc"}));
    // Qwen3.5 keeps a combining mark with its letter; Qwen2 does not.
    const tokenizer::PreTokenizer qwen35(*tokenizer::find_pre_tokenizer("qwen35"));
    EXPECT_EQ(split(qwen35, "re\xCC\x81sume\xCC\x81"), (Pieces{"re\xCC\x81sume\xCC\x81"}));
    EXPECT_EQ(split(qwen2, "re\xCC\x81sume\xCC\x81"), (Pieces{"re", "\xCC\x81sume", "\xCC\x81"}));
    // U+180E is no white space for Oniguruma (nor for Unicode since 6.3), though PCRE2's \s says it is.
    EXPECT_EQ(split(gpt2,
                    "a \xE1\xA0\x8E"
                    "b"),
              (Pieces{"a", " \xE1\xA0\x8E", "b"}));
    // Falcon splits digits in the byte-level text: '½' is C2 BD, shown as 'Â½', and '½' is a number.
    const tokenizer::PreTokenizer falcon(*tokenizer::find_pre_tokenizer("falcon"));
    EXPECT_EQ(split(falcon, "4 \xC2\xBD 12345"), (Pieces{"4", " \xC2", "\xBD", " ", "123", "45"}));
    // Invalid bytes are pieces of their own.
    EXPECT_EQ(split(gpt2,
                    "ab\xFF"
                    "cd"),
              (Pieces{"ab", "\xFF", "cd"}));
}

TEST(PreTokenizer, KnownSplitsOfTheTiktokenFamilies) {
    // o200k: camel case splits, a contraction stays on its word, digits in threes, '/' joins a punctuation run.
    const tokenizer::PreTokenizer gpt4o(*tokenizer::find_pre_tokenizer("gpt-oss"));
    EXPECT_EQ(split(gpt4o, "HelloWorld Don't 12345 a// b"),
              (Pieces{"Hello", "World", " Don't", " ", "123", "45", " a", "//", " b"}));
    // Tekken: the same words without contractions, single digits.
    const tokenizer::PreTokenizer tekken(*tokenizer::find_pre_tokenizer("tekken"));
    EXPECT_EQ(split(tekken, "HelloWorld Don't 123"), (Pieces{"Hello", "World", " Don", "'t", " ", "1", "2", "3"}));
    // Kimi K2: Han runs on their own (by Script, so 、 is not one), the rest as o200k.
    const tokenizer::PreTokenizer kimi(*tokenizer::find_pre_tokenizer("kimi-k2"));
    EXPECT_EQ(
        split(kimi, "ABc\xE4\xB8\xAD\xE6\x96\x87\xE3\x80\x81\xE6\x97\xA5\xE3\x81\xA7\xE3\x81\x99 x"),
        (Pieces{"ABc", "\xE4\xB8\xAD\xE6\x96\x87", "\xE3\x80\x81", "\xE6\x97\xA5", "\xE3\x81\xA7\xE3\x81\x99", " x"}));
    // Seed-Coder: a punctuation run takes no line break.
    const tokenizer::PreTokenizer seed(*tokenizer::find_pre_tokenizer("seed-coder"));
    EXPECT_EQ(split(seed, "a;\nb"), (Pieces{"a", ";", "\n", "b"}));
    EXPECT_EQ(split(qwen2_of(), "a;\nb"), (Pieces{"a", ";\n", "b"}));
}

TEST(PreTokenizer, KnownSplitsOfBloomAndViking) {
    // BLOOM's class leaves out ( ) | white space and its punctuation list; Viking then splits digits.
    const tokenizer::PreTokenizer bloom(*tokenizer::find_pre_tokenizer("poro-chat"));
    EXPECT_EQ(split(bloom, "Hello, (world)|a [x] ok... 12"),
              (Pieces{"Hello", ", (", "world", ")|", "a", " [x]", " ok", "...", " 12"}));
    const tokenizer::PreTokenizer viking(*tokenizer::find_pre_tokenizer("viking"));
    EXPECT_EQ(split(viking, "ab 12c"), (Pieces{"ab", " ", "1", "2", "c"}));
}

// Random byte strings, biased towards the characters the patterns care about.
std::string random_text(std::mt19937& rng, size_t n) {
    static const std::vector<std::string> atoms = {"a",
                                                   "Z",
                                                   " ",
                                                   "  ",
                                                   "\n",
                                                   "\r\n",
                                                   "\t",
                                                   "1",
                                                   "23",
                                                   "'s",
                                                   "'LL",
                                                   "!",
                                                   "...",
                                                   "\xC3\xA9",
                                                   "e\xCC\x81",
                                                   "\xE6\x97\xA5",
                                                   "\xD9\x85",
                                                   "\xF0\x9F\x98\x80",
                                                   "\xE2\x80\x8D",
                                                   "\xC2\xA0",
                                                   "\xE3\x80\x80",
                                                   "\xC2\xBD",
                                                   "\xFF",
                                                   "\xE2\x82",
                                                   "\x80",
                                                   "\x00",
                                                   "<|im_start|>",
                                                   "\xEF\xBC\x81"};
    std::string s;
    std::uniform_int_distribution<size_t> pick(0, atoms.size() - 1);
    for (size_t i = 0; i < n; ++i) s += atoms[pick(rng)];
    return s;
}

TEST(PreTokenizer, PiecesCoverTheTextExactly) {
    std::mt19937 rng(7);
    for (const auto& spec : tokenizer::pre_tokenizer_presets()) {
        const std::string_view name = spec.name;
        const tokenizer::PreTokenizer pre(spec);
        for (int round = 0; round < 200; ++round) {
            const std::string text = random_text(rng, round % 40);
            size_t next = 0;
            for (const auto& p : pre.split(text)) {
                EXPECT_EQ(p.offset, next) << name;
                EXPECT_GT(p.length, 0u) << name;
                next = p.offset + p.length;
            }
            EXPECT_EQ(next, text.size()) << name;
        }
    }
}

TEST(PreTokenizer, LongRunsDoNotFail) {
    // Half a megabyte of each kind of run, alone and before a letter; no regex may give up on them.
    for (const auto& spec : tokenizer::pre_tokenizer_presets()) {
        const std::string_view name = spec.name;
        const tokenizer::PreTokenizer pre(spec);
        for (const std::string unit : {" ", "\n", "a", "7", "!", "\xE6\x97\xA5", "\xF0\x9F\x98\x80", "e\xCC\x81"}) {
            std::string text;
            while (text.size() < (1u << 19)) text += unit;
            for (const std::string& t : {text, text + "x", "x" + text + " y"}) {
                size_t covered = 0;
                ASSERT_NO_THROW(for (const auto& p : pre.split(t)) covered += p.length) << name;
                EXPECT_EQ(covered, t.size()) << name;
            }
        }
    }
}

TEST(Tokenizer, ConcurrentEncodesAgreeWithSequentialOnes) {
    const Tokenizer tok = load_file(fixture_path("tokenizer/qwen2.gguf"));
    std::mt19937 rng(11);
    std::vector<std::string> texts;
    for (int i = 0; i < 300; ++i) texts.push_back(random_text(rng, 50));
    std::vector<std::vector<int32_t>> expected;
    for (const auto& t : texts) expected.push_back(tok.encode(t, true, true));

    const Tokenizer fresh = load_file(fixture_path("tokenizer/qwen2.gguf"));  // an empty word cache
    std::vector<std::thread> threads;
    std::vector<int> mismatches(4, 0);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            const Tokenizer copy = fresh;
            for (int round = 0; round < 3; ++round)
                for (size_t i = 0; i < texts.size(); ++i) {
                    const size_t k = (i * 7 + static_cast<size_t>(t) * 31) % texts.size();
                    mismatches[t] += copy.encode(texts[k], true, true) != expected[k];
                }
        });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0);
}

}  // namespace
}  // namespace ember::test
