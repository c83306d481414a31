// SPDX-License-Identifier: MIT
// Broken tokenizer metadata gives one-line errors that name the file and the key, never a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tokenizer_test_util.h"

namespace ember::test {
namespace {

VocabSpec small_bpe() {
    VocabSpec spec;
    spec.tokens = byte_level_alphabet();
    spec.add("ab");
    spec.merges = {"a b"};
    return spec;
}

VocabSpec small_spm() {
    VocabSpec spec;
    spec.model = "llama";
    spec.pre = "";
    spec.scores = {0.0f, -1.0f, -2.0f};
    spec.add("<unk>", TokenType::unknown);
    spec.add("a");
    spec.add("b");
    return spec;
}

// The message of the error loading `spec` gives; fails the test if there is none or it has several lines.
std::string load_error(const VocabSpec& spec) {
    try {
        load_vocab(spec);
    } catch (const Error& e) {
        const std::string message = e.what();
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        EXPECT_EQ(message.rfind("test.gguf: tokenizer: ", 0), 0u) << message;
        return message;
    }
    ADD_FAILURE() << "loaded without an error";
    return {};
}

// load_error of small_bpe() with `key` set to `value`.
std::string error_with_key(const std::string& key, gguf::OwnedValue value) {
    VocabSpec spec = small_bpe();
    spec.keys[key] = std::move(value);
    return load_error(spec);
}

using ::testing::HasSubstr;

TEST(BadMetadata, TheGoodOnesLoad) {
    EXPECT_NO_THROW(load_vocab(small_bpe()));
    EXPECT_NO_THROW(load_vocab(small_spm()));
}

TEST(BadMetadata, MissingKeys) {
    VocabSpec spec = small_bpe();
    spec.omit = {"tokenizer.ggml.tokens"};
    EXPECT_EQ(load_error(spec), "test.gguf: tokenizer: missing key 'tokenizer.ggml.tokens'");
    spec.omit = {"tokenizer.ggml.model"};
    EXPECT_EQ(load_error(spec), "test.gguf: tokenizer: missing key 'tokenizer.ggml.model'");
    spec.omit = {"tokenizer.ggml.merges"};
    EXPECT_THAT(load_error(spec), HasSubstr("missing key 'tokenizer.ggml.merges'"));
    spec.omit = {"tokenizer.ggml.pre"};
    EXPECT_THAT(load_error(spec), HasSubstr("missing key 'tokenizer.ggml.pre'"));
    EXPECT_THAT(load_error(spec), HasSubstr("pre-tokenizer; supported: gpt-2, "));
    VocabSpec spm = small_spm();
    spm.omit = {"tokenizer.ggml.scores"};
    EXPECT_THAT(load_error(spm), HasSubstr("missing key 'tokenizer.ggml.scores'"));
}

TEST(BadMetadata, UnsupportedModelOrPreTokenizer) {
    VocabSpec spec = small_bpe();
    spec.model = "bert";
    EXPECT_EQ(load_error(spec),
              "test.gguf: tokenizer: tokenizer.ggml.model 'bert' is not supported "
              "(supported: gpt2, llama)");
    spec = small_bpe();
    spec.pre = "grok-2";  // a name converters write that Ember has no preset for
    std::string supported;
    for (const std::string& name : Tokenizer::supported_pre_tokenizers())
        supported += (supported.empty() ? "" : ", ") + name;
    EXPECT_EQ(load_error(spec),
              "test.gguf: tokenizer: tokenizer.ggml.pre 'grok-2' is not supported (supported: " + supported + ")");
    // Names are matched exactly: no case folding, no trimming, no prefix.
    for (const char* near : {"GPT-2", "gpt-2 ", "gpt", "qwen", "tekken2"}) {
        spec.pre = near;
        EXPECT_THAT(load_error(spec), HasSubstr("tokenizer.ggml.pre '" + spec.pre + "' is not supported")) << near;
    }
    // Control characters are escaped and a long name is cut: the message stays one line.
    spec.pre = "bad\nname\x1b[31m";
    EXPECT_THAT(load_error(spec), HasSubstr("tokenizer.ggml.pre 'bad\\x0aname\\x1b[31m' is not supported"));
    spec.pre = std::string(63, 'x') + "\xC3\xA9" + std::string(200, 'y');  // é across the cut
    EXPECT_THAT(load_error(spec), HasSubstr("'" + std::string(63, 'x') + "...' is not supported"));
}

TEST(BadMetadata, EveryPreTokenizerNameLoads) {
    for (const std::string& name : Tokenizer::supported_pre_tokenizers()) {
        VocabSpec spec = small_bpe();
        spec.pre = name;
        EXPECT_EQ(load_vocab(spec).encode("ab ab", false, false).size(), 3u) << name;
    }
}

TEST(BadMetadata, WrongTypes) {
    EXPECT_EQ(error_with_key("tokenizer.ggml.tokens", uint32_t(3)),
              "test.gguf: tokenizer: key 'tokenizer.ggml.tokens' has type u32, expected "
              "array[string]");
    EXPECT_THAT(error_with_key("tokenizer.ggml.model", int32_t(1)),
                HasSubstr("key 'tokenizer.ggml.model' has type i32, expected string"));
    EXPECT_THAT(error_with_key("tokenizer.ggml.add_bos_token", std::string("yes")),
                HasSubstr("key 'tokenizer.ggml.add_bos_token' has type string, expected bool"));
    EXPECT_THAT(error_with_key("tokenizer.ggml.bos_token_id", 1.5f),
                HasSubstr("key 'tokenizer.ggml.bos_token_id' has type f32, expected integer"));
    EXPECT_THAT(error_with_key("tokenizer.ggml.token_type", gguf::make_string_array({"normal"})),
                HasSubstr("expected array[integer]"));
}

TEST(BadMetadata, TokensAndTypes) {
    VocabSpec spec = small_bpe();
    spec.keys["tokenizer.ggml.tokens"] = gguf::make_string_array({});
    EXPECT_EQ(load_error(spec), "test.gguf: tokenizer: tokenizer.ggml.tokens is empty");
    spec = small_bpe();
    spec.types.resize(10);
    EXPECT_EQ(load_error(spec),
              "test.gguf: tokenizer: tokenizer.ggml.token_type has 10 entries, expected 257 "
              "(one per token)");
    spec = small_bpe();
    spec.types.assign(spec.tokens.size(), 1);
    spec.types[42] = 9;
    EXPECT_EQ(load_error(spec),
              "test.gguf: tokenizer: tokenizer.ggml.token_type[42] = 9 is not a token type "
              "(expected 0..6)");
    VocabSpec spm = small_spm();
    spm.scores.pop_back();
    EXPECT_THAT(load_error(spm), HasSubstr("tokenizer.ggml.scores has 2 entries, expected 3 (one per token)"));
}

TEST(BadMetadata, SpecialIdsOutOfRange) {
    EXPECT_EQ(error_with_key("tokenizer.ggml.bos_token_id", uint32_t(257)),
              "test.gguf: tokenizer: tokenizer.ggml.bos_token_id = 257 is out of range "
              "(the vocabulary has 257 tokens)");
    EXPECT_THAT(error_with_key("tokenizer.ggml.eot_token_id", int32_t(-7)),
                HasSubstr("tokenizer.ggml.eot_token_id = -7 is out of range"));
    EXPECT_THAT(error_with_key("tokenizer.ggml.padding_token_id", uint64_t(1) << 63),
                HasSubstr("tokenizer.ggml.padding_token_id = "));
    // -1 is how some converters write "none".
    VocabSpec spec = small_bpe();
    spec.keys["tokenizer.ggml.padding_token_id"] = int32_t(-1);
    EXPECT_EQ(load_vocab(spec).pad_id(), -1);
}

TEST(BadMetadata, Merges) {
    VocabSpec spec = small_bpe();
    spec.merges = {"a b", "a qq"};
    spec.add("aqq");
    EXPECT_EQ(load_error(spec),
              "test.gguf: tokenizer: tokenizer.ggml.merges[1] 'a qq' names 'qq', which is not "
              "a token");
    spec = small_bpe();
    spec.merges = {"zz b"};
    EXPECT_THAT(load_error(spec), HasSubstr("tokenizer.ggml.merges[0] 'zz b' names 'zz', which is not a token"));
    spec = small_bpe();
    spec.merges = {"a b", "b a"};
    EXPECT_EQ(load_error(spec),
              "test.gguf: tokenizer: tokenizer.ggml.merges[1] 'b a' makes 'ba', which is not "
              "a token");
    spec = small_bpe();
    spec.merges = {"ab"};
    EXPECT_EQ(load_error(spec),
              "test.gguf: tokenizer: tokenizer.ggml.merges[0] 'ab' is not two tokens separated "
              "by a space");
    spec.merges = {"a "};
    EXPECT_THAT(load_error(spec), HasSubstr("is not two tokens separated by a space"));
    spec.merges = {""};
    EXPECT_THAT(load_error(spec), HasSubstr("is not two tokens separated by a space"));
}

TEST(BadMetadata, TruncatedOrGarbledFilesNeverCrash) {
    // Every single-byte corruption of a small tokenizer GGUF either loads or gives an ember::Error.
    const MemoryGguf good = write_vocab(small_bpe());
    for (size_t i = 0; i < good.bytes.size(); ++i) {
        for (const uint8_t value : {uint8_t(0x00), uint8_t(0xFF), uint8_t(0x7F)}) {
            std::vector<std::byte> bytes = good.bytes;
            bytes[i] = std::byte{value};
            try {
                const gguf::File file = gguf::File::from_memory(bytes, "garbled.gguf");
                const Tokenizer tok = Tokenizer::from_gguf(file);
                tok.decode(tok.encode("ab abc \xFF", true, true));
            } catch (const Error&) {
            }
        }
    }
}

}  // namespace
}  // namespace ember::test
