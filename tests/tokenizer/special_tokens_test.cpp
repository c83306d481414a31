// SPDX-License-Identifier: MIT
// Special and added tokens, BOS/EOS flags, end-of-generation ids and token lookups, on small vocabularies
// written as GGUF in memory.
#include <gtest/gtest.h>

#include "tokenizer_test_util.h"

namespace ember::test {
namespace {

// Byte-level alphabet, merges making "hello", and special tokens that overlap ("<|im" is a prefix of
// "<|im_start|>").
struct ChatVocab {
    VocabSpec spec;
    int32_t he, ll, hell, hello, bos, eos, im_start, im_prefix, think, pad;

    ChatVocab() {
        spec.tokens = byte_level_alphabet();
        he = spec.add("he");
        ll = spec.add("ll");
        hell = spec.add("hell");
        hello = spec.add("hello");
        spec.merges = {"h e", "l l", "he ll", "hell o"};
        bos = spec.add("<s>", TokenType::control);
        eos = spec.add("</s>", TokenType::control);
        im_start = spec.add("<|im_start|>", TokenType::control);
        im_prefix = spec.add("<|im", TokenType::control);
        think = spec.add("<think>", TokenType::user_defined);
        pad = spec.add("[PAD]", TokenType::unknown);
        spec.keys["tokenizer.ggml.bos_token_id"] = uint32_t(bos);
        spec.keys["tokenizer.ggml.eos_token_id"] = uint32_t(eos);
    }
};

int32_t byte_id(char c) {
    return static_cast<unsigned char>(c);
}  // the alphabet is ids 0..255 in byte order

std::vector<int32_t> byte_ids(std::string_view s) {
    std::vector<int32_t> ids;
    for (const char c : s) ids.push_back(byte_id(c));
    return ids;
}

TEST(SpecialTokens, ParsedOnlyWhenAsked) {
    ChatVocab v;
    const Tokenizer tok = load_vocab(v.spec);
    EXPECT_EQ(tok.encode("hello", false, false), (std::vector<int32_t>{v.hello}));
    EXPECT_EQ(tok.encode("<|im_start|>hello", false, true), (std::vector<int32_t>{v.im_start, v.hello}));
    // As plain text the same characters are ordinary bytes (the gpt-2 regex cuts "<|" and "im", "_", ...).
    std::vector<int32_t> plain = byte_ids("<|im_start|>");
    plain.push_back(v.hello);
    EXPECT_EQ(tok.encode("<|im_start|>hello", false, false), plain);
    // User-defined and unknown-type tokens follow the same switch.
    EXPECT_EQ(tok.encode("<think>", false, true), (std::vector<int32_t>{v.think}));
    EXPECT_EQ(tok.encode("<think>", false, false), byte_ids("<think>"));
    EXPECT_EQ(tok.encode("[PAD]", false, true), (std::vector<int32_t>{v.pad}));
}

TEST(SpecialTokens, LongestMatchWinsAndTextAroundIsKept) {
    ChatVocab v;
    const Tokenizer tok = load_vocab(v.spec);
    EXPECT_EQ(tok.encode("<|imhello", false, true), (std::vector<int32_t>{v.im_prefix, v.hello}));
    // "<|im_star" is not a token: "<|im" is matched and the rest is text.
    std::vector<int32_t> expected = {v.hello, v.im_start, v.im_start, v.bos, v.im_prefix};
    const std::vector<int32_t> rest = byte_ids("_star");
    expected.insert(expected.end(), rest.begin(), rest.end());
    EXPECT_EQ(tok.encode("hello<|im_start|><|im_start|><s><|im_star", false, true), expected);
    const std::string text = "a<s>b</s>c<|im_start|><think>";
    EXPECT_EQ(tok.decode(tok.encode(text, false, true), true), text);
}

TEST(SpecialTokens, BosAndEosFollowTheFlags) {
    ChatVocab v;
    EXPECT_EQ(load_vocab(v.spec).encode("hello", true, false), (std::vector<int32_t>{v.hello}));  // gpt2 default
    v.spec.keys["tokenizer.ggml.add_bos_token"] = true;
    EXPECT_EQ(load_vocab(v.spec).encode("hello", true, false), (std::vector<int32_t>{v.bos, v.hello}));
    EXPECT_EQ(load_vocab(v.spec).encode("hello", false, false), (std::vector<int32_t>{v.hello}));
    v.spec.keys["tokenizer.ggml.add_eos_token"] = true;
    const Tokenizer tok = load_vocab(v.spec);
    EXPECT_TRUE(tok.add_bos());
    EXPECT_TRUE(tok.add_eos());
    EXPECT_EQ(tok.encode("hello", true, false), (std::vector<int32_t>{v.bos, v.hello, v.eos}));
    EXPECT_EQ(tok.encode("", true, false), (std::vector<int32_t>{v.bos, v.eos}));
    EXPECT_EQ(tok.encode("", false, false), std::vector<int32_t>{});
    EXPECT_EQ(tok.decode(tok.encode("hello", true, false)), "hello");
    EXPECT_EQ(tok.decode(tok.encode("hello", true, false), true), "<s>hello</s>");
    // Flags ask for a token the file does not name: nothing is added.
    v.spec.keys.erase("tokenizer.ggml.bos_token_id");
    EXPECT_EQ(load_vocab(v.spec).encode("hello", true, false), (std::vector<int32_t>{v.hello, v.eos}));
}

TEST(SpecialTokens, PiecesAndLookups) {
    ChatVocab v;
    const Tokenizer tok = load_vocab(v.spec);
    EXPECT_EQ(tok.n_vocab(), static_cast<int32_t>(v.spec.tokens.size()));
    EXPECT_EQ(tok.token_to_piece(v.bos), "");
    EXPECT_EQ(tok.token_to_piece(v.bos, true), "<s>");
    EXPECT_EQ(tok.token_to_piece(v.pad), "");
    EXPECT_EQ(tok.token_to_piece(v.think), "<think>");  // user-defined tokens are text
    EXPECT_EQ(tok.token_to_piece(byte_id(' ')), " ");   // 'Ġ' in the vocabulary
    EXPECT_EQ(tok.token_text(byte_id(' ')), "\xC4\xA0");
    EXPECT_EQ(tok.token_to_piece(0xE2), "\xE2");  // a lone byte: a partial UTF-8 sequence
    EXPECT_EQ(tok.token_type(v.im_start), TokenType::control);
    EXPECT_EQ(tok.token_type(v.hello), TokenType::normal);
    EXPECT_EQ(tok.find_token("hello"), v.hello);
    EXPECT_EQ(tok.find_token("nope"), std::nullopt);
    EXPECT_EQ(tok.bos_id(), v.bos);
    EXPECT_EQ(tok.eos_id(), v.eos);
    EXPECT_EQ(tok.eot_id(), -1);
    EXPECT_EQ(tok.pad_id(), -1);
    EXPECT_TRUE(tok.is_end_of_generation(v.eos));
    EXPECT_FALSE(tok.is_end_of_generation(v.bos));
    EXPECT_FALSE(tok.is_end_of_generation(-5));
}

TEST(SpecialTokens, EndOfTurnTokensAreFoundByKeyOrByName) {
    ChatVocab v;
    const int32_t im_end = v.spec.add("<|im_end|>", TokenType::control);
    const int32_t eot_id = v.spec.add("<|eot_id|>", TokenType::control);
    const int32_t eom_id = v.spec.add("<|eom_id|>", TokenType::control);
    const int32_t plain_end = v.spec.add("<|end|>");  // a normal token: only typed tokens count
    Tokenizer tok = load_vocab(v.spec);
    EXPECT_EQ(tok.eot_id(), eot_id);  // preferred over <|im_end|>
    EXPECT_EQ(tok.eom_id(), eom_id);
    for (const int32_t id : {v.eos, im_end, eot_id, eom_id}) EXPECT_TRUE(tok.is_end_of_generation(id)) << id;
    EXPECT_FALSE(tok.is_end_of_generation(plain_end));
    v.spec.keys["tokenizer.ggml.eot_token_id"] = uint32_t(v.hello);
    tok = load_vocab(v.spec);
    EXPECT_EQ(tok.eot_id(), v.hello);
    EXPECT_TRUE(tok.is_end_of_generation(v.hello));
}

TEST(SpecialTokens, HarmonyEndsWithReturnOrCallButNotWithEnd) {
    ChatVocab v;
    const int32_t end = v.spec.add("<|end|>", TokenType::control);
    const int32_t ret = v.spec.add("<|return|>", TokenType::control);
    v.spec.keys["tokenizer.ggml.eot_token_id"] = uint32_t(end);  // a converter's choice that must not stop generation
    Tokenizer tok = load_vocab(v.spec);
    EXPECT_TRUE(tok.is_end_of_generation(end)) << "without <|call|> the vocabulary is no harmony one";
    const int32_t call = v.spec.add("<|call|>", TokenType::control);
    tok = load_vocab(v.spec);
    EXPECT_TRUE(tok.is_end_of_generation(ret));
    EXPECT_TRUE(tok.is_end_of_generation(call));
    EXPECT_FALSE(tok.is_end_of_generation(end));
    EXPECT_TRUE(tok.is_end_of_generation(v.eos));
}

TEST(SpecialTokens, OutOfRangeIdsAreErrors) {
    ChatVocab v;
    const Tokenizer tok = load_vocab(v.spec);
    EXPECT_THROW(tok.token_to_piece(-1), Error);
    EXPECT_THROW(tok.token_to_piece(tok.n_vocab()), Error);
    EXPECT_THROW(tok.token_text(tok.n_vocab()), Error);
    EXPECT_THROW(tok.token_type(-2), Error);
    const std::vector<int32_t> ids = {v.hello, 1 << 30};
    try {
        tok.decode(ids);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "tokenizer: token id 1073741824 is out of range (the vocabulary has 266 tokens)");
    }
}

TEST(SpecialTokens, CopiesShareTheirTables) {
    ChatVocab v;
    const Tokenizer a = load_vocab(v.spec);
    const Tokenizer b = a;  // NOLINT(performance-unnecessary-copy-initialization): the copy is what is tested
    Tokenizer c = load_vocab(v.spec);
    c = b;
    EXPECT_EQ(b.encode("hello<s>", false, true), a.encode("hello<s>", false, true));
    EXPECT_EQ(c.token_text(v.hello), "hello");
    EXPECT_EQ(b.token_text(v.hello).data(), a.token_text(v.hello).data());
}

// ---------------------------------------------------------------------------------------------------------------
// SentencePiece

struct SpmVocab {
    VocabSpec spec;
    int32_t unk, bos, eos, space, h, e, l, o, s_he, s_ll, s_hell, s_hello, s_space_h, s_space_hello, marker_text;

    explicit SpmVocab(bool byte_tokens = true) {
        spec.model = "llama";
        spec.pre = "default";
        const auto add = [&](const std::string& text, TokenType type, float score) {
            spec.scores.push_back(score);
            return spec.add(text, type);
        };
        unk = add("<unk>", TokenType::unknown, 0);
        bos = add("<s>", TokenType::control, 0);
        eos = add("</s>", TokenType::control, 0);
        if (byte_tokens) {
            for (unsigned b = 0; b < 256; ++b) {
                char text[8];
                std::snprintf(text, sizeof text, "<0x%02X>", b);
                add(text, TokenType::byte, 0);
            }
        }
        space = add("\xE2\x96\x81", TokenType::normal, -1);
        h = add("h", TokenType::normal, -2);
        e = add("e", TokenType::normal, -3);
        l = add("l", TokenType::normal, -4);
        o = add("o", TokenType::normal, -5);
        s_he = add("he", TokenType::normal, -10);
        s_ll = add("ll", TokenType::normal, -11);
        s_hell = add("hell", TokenType::normal, -12);
        s_hello = add("hello", TokenType::normal, -13);
        s_space_h = add("\xE2\x96\x81h", TokenType::normal, -14);
        s_space_hello = add("\xE2\x96\x81hello", TokenType::normal, -15);
        marker_text = add("<tool>", TokenType::user_defined, 0);
        spec.keys["tokenizer.ggml.bos_token_id"] = uint32_t(bos);
        spec.keys["tokenizer.ggml.eos_token_id"] = uint32_t(eos);
        spec.keys["tokenizer.ggml.unknown_token_id"] = uint32_t(unk);
    }
    int32_t byte(uint8_t b) const { return 3 + b; }
};

TEST(SentencePiece, MergesByScoreWithTheSpacePrefix) {
    SpmVocab v;
    const Tokenizer tok = load_vocab(v.spec);
    EXPECT_TRUE(tok.add_bos());
    EXPECT_TRUE(tok.add_space_prefix());
    EXPECT_EQ(tok.encode("hello", false, false), (std::vector<int32_t>{v.s_space_hello}));
    EXPECT_EQ(tok.encode("hello", true, false), (std::vector<int32_t>{v.bos, v.s_space_hello}));
    EXPECT_EQ(tok.encode("hello hello", false, false), (std::vector<int32_t>{v.s_space_hello, v.s_space_hello}));
    // "▁h" (score -14) loses to "he" (-10), then "hell" and "hello" follow; "▁" stays alone.
    EXPECT_EQ(tok.encode("hellohe", false, false), (std::vector<int32_t>{v.s_space_hello, v.s_he}));
    EXPECT_EQ(tok.encode("", true, false), (std::vector<int32_t>{v.bos}));
    EXPECT_EQ(tok.decode(tok.encode("hello hello", true, false)), "hello hello");
    EXPECT_EQ(tok.decode(tok.encode(" hello", true, false)), " hello");
    EXPECT_EQ(tok.token_to_piece(v.s_space_hello), " hello");
}

TEST(SentencePiece, ByteFallbackAndUnknown) {
    SpmVocab v;
    const Tokenizer tok = load_vocab(v.spec);
    // "é" is not a token: its two bytes are.
    EXPECT_EQ(tok.encode("h\xC3\xA9", false, false), (std::vector<int32_t>{v.s_space_h, v.byte(0xC3), v.byte(0xA9)}));
    EXPECT_EQ(tok.decode(tok.encode("h\xC3\xA9 \xF0\x9F\xA6\x99!", true, false)), "h\xC3\xA9 \xF0\x9F\xA6\x99!");
    EXPECT_EQ(tok.token_to_piece(v.byte(0x41)), "A");
    // Invalid UTF-8 is kept byte for byte.
    EXPECT_EQ(tok.decode(tok.encode("h\xFF\xC3", false, false)), "h\xFF\xC3");

    SpmVocab no_bytes(false);
    const Tokenizer bare = load_vocab(no_bytes.spec);
    EXPECT_EQ(bare.encode("h\xC3\xA9", false, false), (std::vector<int32_t>{no_bytes.s_space_h, no_bytes.unk}));
}

TEST(SentencePiece, SpacePrefixFlagAndSpecialTokens) {
    SpmVocab v;
    const Tokenizer tok = load_vocab(v.spec);
    // A text segment after a special token gets the prefix too, and decoding removes it again.
    EXPECT_EQ(tok.encode("<s>hello<tool>hello", false, true),
              (std::vector<int32_t>{v.bos, v.s_space_hello, v.marker_text, v.s_space_hello}));
    EXPECT_EQ(tok.decode(tok.encode("<s>hello<tool>hello", false, true), true), "<s>hello<tool>hello");
    EXPECT_EQ(tok.decode(tok.encode("<s>hello<tool>hello", false, true), false), "hello<tool>hello");

    v.spec.keys["tokenizer.ggml.add_space_prefix"] = false;
    v.spec.keys["tokenizer.ggml.add_bos_token"] = false;
    const Tokenizer raw = load_vocab(v.spec);
    EXPECT_FALSE(raw.add_space_prefix());
    EXPECT_EQ(raw.encode("hello", true, false), (std::vector<int32_t>{v.s_hello}));
    EXPECT_EQ(raw.encode(" hello", true, false), (std::vector<int32_t>{v.s_space_hello}));
    EXPECT_EQ(raw.decode(raw.encode(" hello", true, false)), " hello");
}

}  // namespace
}  // namespace ember::test
