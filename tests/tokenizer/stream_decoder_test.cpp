// SPDX-License-Identifier: MIT
// The stream-safe detokenizer: only complete UTF-8 comes out, whatever the split of the bytes into tokens.
#include <gtest/gtest.h>

#include <cstdio>

#include "tokenizer_test_util.h"

namespace ember::test {
namespace {

// aé€😀 日本語 مرحبا é 👩‍💻 🦙! (with a combining accent)
const std::string kMultilingual =
    "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80 \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E "
    "\xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7 "
    "e\xCC\x81 \xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB \xF0\x9F\xA6\x99!";

// The llama-spm vocabulary has a <0xXX> token for every byte, so any byte string can be fed one byte at a time.
class StreamDecoderBytes : public ::testing::Test {
protected:
    void SetUp() override {
        tok_ = std::make_unique<Tokenizer>(load_file(shared_data("vocab/ggml-vocab/ggml-vocab-llama-spm.gguf")));
    }
    int32_t byte_token(uint8_t b) const {
        char text[8];
        std::snprintf(text, sizeof text, "<0x%02X>", b);
        return *tok_->find_token(text);
    }
    std::unique_ptr<Tokenizer> tok_;
};

// Length of the longest prefix of s[0, n) that ends on a character boundary.
size_t complete_prefix(const std::string& s, size_t n) {
    size_t i = 0;
    while (i < n) {
        const size_t len = tokenizer::utf8_length(static_cast<unsigned char>(s[i]));
        if (i + len > n) break;
        i += len;
    }
    return i;
}

TEST_F(StreamDecoderBytes, EveryByteSplitPointGivesTheCompletePrefix) {
    StreamDecoder stream(*tok_);
    std::string out;
    for (size_t i = 0; i < kMultilingual.size(); ++i) {
        out += stream.push(byte_token(static_cast<uint8_t>(kMultilingual[i])));
        EXPECT_EQ(out, kMultilingual.substr(0, complete_prefix(kMultilingual, i + 1))) << "after byte " << i;
        EXPECT_TRUE(tokenizer::is_valid_utf8(out));
    }
    out += stream.flush();
    EXPECT_EQ(out, kMultilingual);
}

TEST_F(StreamDecoderBytes, EveryTwoPieceSplitOfTheText) {
    // Text tokens for the first part, byte tokens for the second: a character may be cut anywhere.
    for (size_t cut = 0; cut <= kMultilingual.size(); ++cut) {
        std::vector<int32_t> ids;
        for (size_t i = 0; i < cut; ++i) ids.push_back(byte_token(static_cast<uint8_t>(kMultilingual[i])));
        const std::vector<int32_t> rest = tok_->encode(kMultilingual.substr(cut), false, false);
        StreamDecoder stream(*tok_);
        std::string out;
        for (const int32_t id : ids) out += stream.push(id);
        EXPECT_EQ(out, kMultilingual.substr(0, complete_prefix(kMultilingual, cut)));
        for (const int32_t id : rest) {
            out += stream.push(id);
            EXPECT_TRUE(tokenizer::is_valid_utf8(out)) << "cut " << cut;
        }
        out += stream.flush();
        // The second part was encoded with its own "▁" prefix, which is no segment start here and so stays.
        const std::string expected =
            kMultilingual.substr(0, cut) + (cut == 0 || rest.empty() ? "" : " ") + kMultilingual.substr(cut);
        if (tokenizer::is_valid_utf8(kMultilingual.substr(0, cut)) || cut == kMultilingual.size()) {
            EXPECT_EQ(out, expected) << "cut " << cut;
        } else {
            // The space lands inside the cut character: its bytes are replaced, never passed on invalid.
            EXPECT_TRUE(tokenizer::is_valid_utf8(out));
        }
    }
}

TEST_F(StreamDecoderBytes, InvalidBytesBecomeReplacementCharacters) {
    StreamDecoder stream(*tok_);
    EXPECT_EQ(stream.push(byte_token(0xFF)), "\xEF\xBF\xBD");  // can never start a character
    EXPECT_EQ(stream.push(byte_token(0xE2)), "");              // may still become '€'
    EXPECT_EQ(stream.push(byte_token(0x82)), "");
    EXPECT_EQ(stream.push(byte_token('A')),
              "\xEF\xBF\xBD"
              "A");  // it did not: one U+FFFD for E2 82
    EXPECT_EQ(stream.push(byte_token(0xF0)), "");
    EXPECT_EQ(stream.flush(), "\xEF\xBF\xBD");
    EXPECT_EQ(stream.flush(), "");
    EXPECT_EQ(stream.push(byte_token(0xC3)), "");
    EXPECT_EQ(stream.push(byte_token(0xA9)), "\xC3\xA9");
}

TEST_F(StreamDecoderBytes, MatchesDecodeIncludingTheSpaceRuleAndSpecialTokens) {
    const std::string text = "Hello world, " + kMultilingual;
    const std::vector<int32_t> ids = tok_->encode(text, true, false);
    for (const bool special : {false, true}) {
        StreamDecoder stream(*tok_, special);
        std::string out;
        for (const int32_t id : ids) out += stream.push(id);
        out += stream.flush();
        EXPECT_EQ(out, tok_->decode(ids, special));
    }
    EXPECT_EQ(tok_->decode(ids), text);
    EXPECT_EQ(tok_->decode(ids, true), "<s>" + text);
}

TEST(StreamDecoder, ByteLevelTokensThatSplitCharacters) {
    const Tokenizer tok = load_file(fixture_path("tokenizer/qwen2.gguf"));
    // Qwen2 normalizes to NFC, so the text is written in NFC to come back unchanged.
    const std::string text =
        "<|im_start|>assistant\n\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80 \xE6\x97\xA5\xE6\x9C\xAC "
        "\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB \xF0\x9F\xA6\x99\xF0\x9F\xA6\x99<|im_end|>";
    const std::vector<int32_t> ids = tok.encode(text, false, true);
    // Some tokens of the emoji are partial UTF-8 sequences.
    size_t partial = 0;
    for (const int32_t id : ids) partial += !tokenizer::is_valid_utf8(tok.token_to_piece(id));
    EXPECT_GT(partial, 0u);
    for (const bool special : {false, true}) {
        StreamDecoder stream(tok, special);
        std::string out;
        for (const int32_t id : ids) {
            const std::string piece = stream.push(id);
            EXPECT_TRUE(tokenizer::is_valid_utf8(piece));
            out += piece;
        }
        out += stream.flush();
        EXPECT_EQ(out, tok.decode(ids, special));
    }
    EXPECT_EQ(tok.decode(ids, true), text);
}

}  // namespace
}  // namespace ember::test
