// SPDX-License-Identifier: MIT
// The ggml-vocab reference pairs: for each text of NAME.gguf.inp, the ids Hugging Face's tokenizer of that model
// gives with no special tokens added (NAME.gguf.out). Every text must match exactly and decode back to itself.
#include <gtest/gtest.h>

#include <set>

#include "tokenizer_test_util.h"

namespace ember::test {
namespace {

struct VocabFile {
    std::string name;   // the .inp/.out pair
    std::string model;  // the GGUF: shared/data/vocab/ggml-vocab/... or a generated fixture
    bool fixture;
};

std::filesystem::path model_path(const VocabFile& v) {
    return v.fixture ? fixture_path("tokenizer/" + v.model) : shared_data("vocab/ggml-vocab/" + v.model);
}

void PrintTo(const VocabFile& v, std::ostream* os) {
    *os << v.name;
}

class GgmlVocab : public ::testing::TestWithParam<VocabFile> {};

TEST_P(GgmlVocab, EncodesEveryTextAsHuggingFaceDoes) {
    const VocabFile& v = GetParam();
    const Tokenizer tok = load_file(model_path(v));
    const auto dir = shared_data("vocab/ggml-vocab");
    const auto cases =
        read_vocab_cases(dir / ("ggml-vocab-" + v.name + ".gguf.inp"), dir / ("ggml-vocab-" + v.name + ".gguf.out"));
    ASSERT_GE(cases.size(), 40u);
    size_t matched = 0;
    for (const auto& c : cases) {
        const std::vector<int32_t> ids = tok.encode(c.text, false, false);
        EXPECT_EQ(ids, c.ids) << "text: '" << c.text << "'";
        matched += ids == c.ids;
        EXPECT_EQ(tok.decode(ids), c.text);
    }
    EXPECT_EQ(matched, cases.size());
}

const VocabFile kVocabFiles[] = {
    {"gpt-2", "ggml-vocab-gpt-2.gguf", false},
    {"deepseek-coder", "ggml-vocab-deepseek-coder.gguf", false},
    {"deepseek-llm", "ggml-vocab-deepseek-llm.gguf", false},
    {"falcon", "ggml-vocab-falcon.gguf", false},
    {"llama-spm", "ggml-vocab-llama-spm.gguf", false},
    {"phi-3", "ggml-vocab-phi-3.gguf", false},
    // Built at test time from shared/data/vocab/qwen2.5-qwen3 (vocab.json, merges.txt).
    {"qwen2", "qwen2.gguf", true},
    // No Qwen3.5 vocabulary is available; every expected id of qwen35.gguf.out lies within the 151,643 regular
    // tokens it shares with Qwen2, so the Qwen2 files with the qwen35 pre-tokenizer must give them.
    {"qwen35", "qwen35-qwen2vocab.gguf", true},
};

INSTANTIATE_TEST_SUITE_P(Shared, GgmlVocab, ::testing::ValuesIn(kVocabFiles),
                         [](const ::testing::TestParamInfo<VocabFile>& param) {
                             std::string name = param.param.name;
                             for (char& c : name)
                                 if (c == '-') c = '_';
                             return name;
                         });

// A pair added to the directory is checked, or this fails. The one left out is llama-bpe's: its ids are Llama 3's,
// and no Llama 3 vocabulary is here (the directory has no ggml-vocab-llama-bpe.gguf).
TEST(GgmlVocab, EveryPairInTheDirectoryIsChecked) {
    const std::string prefix = "ggml-vocab-";
    const std::string suffix = ".gguf.inp";
    std::set<std::string> pairs;
    for (const auto& entry : std::filesystem::directory_iterator(shared_data("vocab/ggml-vocab"))) {
        const std::string file = entry.path().filename().string();
        if (file.starts_with(prefix) && file.ends_with(suffix))
            pairs.insert(file.substr(prefix.size(), file.size() - prefix.size() - suffix.size()));
    }
    std::set<std::string> checked = {"llama-bpe"};
    for (const VocabFile& v : kVocabFiles) checked.insert(v.name);
    EXPECT_EQ(pairs, checked);
    EXPECT_FALSE(std::filesystem::exists(shared_data("vocab/ggml-vocab/ggml-vocab-llama-bpe.gguf")));
}

TEST(GgmlVocab, Qwen35ExpectationsLieInTheSharedQwen2Range) {
    const auto dir = shared_data("vocab/ggml-vocab");
    for (const auto& c : read_vocab_cases(dir / "ggml-vocab-qwen35.gguf.inp", dir / "ggml-vocab-qwen35.gguf.out"))
        for (const int32_t id : c.ids) EXPECT_LT(id, 151643) << "text: '" << c.text << "'";
}

TEST(GgmlVocab, LoadsTheFlagsAndSpecialIdsOfTheFiles) {
    const Tokenizer spm = load_file(shared_data("vocab/ggml-vocab/ggml-vocab-llama-spm.gguf"));
    EXPECT_EQ(spm.model(), "llama");
    EXPECT_EQ(spm.n_vocab(), 32000);
    EXPECT_EQ(spm.bos_id(), 1);
    EXPECT_EQ(spm.eos_id(), 2);
    EXPECT_EQ(spm.unk_id(), 0);
    EXPECT_TRUE(spm.add_bos());
    EXPECT_FALSE(spm.add_eos());
    EXPECT_TRUE(spm.add_space_prefix());
    EXPECT_EQ(spm.encode("Hello", true, false), (std::vector<int32_t>{1, 15043}));

    const Tokenizer gpt2 = load_file(shared_data("vocab/ggml-vocab/ggml-vocab-gpt-2.gguf"));
    EXPECT_EQ(gpt2.model(), "gpt2");
    EXPECT_EQ(gpt2.pre_tokenizer(), "gpt-2");
    EXPECT_EQ(gpt2.n_vocab(), 50257);
    EXPECT_FALSE(gpt2.add_bos());  // no add_bos_token key: byte-level BPE adds nothing
    EXPECT_EQ(gpt2.encode("Hello", true, false), (std::vector<int32_t>{15496}));
    EXPECT_TRUE(gpt2.is_end_of_generation(50256));

    const Tokenizer coder = load_file(shared_data("vocab/ggml-vocab/ggml-vocab-deepseek-coder.gguf"));
    EXPECT_TRUE(coder.add_bos());
    EXPECT_EQ(coder.encode("Hello", true, false).front(), 32013);
    EXPECT_EQ(coder.eot_id(), *coder.find_token("<|EOT|>"));
    EXPECT_TRUE(coder.is_end_of_generation(32014));
    EXPECT_TRUE(coder.is_end_of_generation(*coder.find_token("<|EOT|>")));

    const Tokenizer phi3 = load_file(shared_data("vocab/ggml-vocab/ggml-vocab-phi-3.gguf"));
    EXPECT_EQ(phi3.eot_id(), *phi3.find_token("<|end|>"));
    EXPECT_TRUE(phi3.is_end_of_generation(32000));   // eos <|endoftext|>
    EXPECT_TRUE(phi3.is_end_of_generation(32007));   // <|end|>
    EXPECT_FALSE(phi3.is_end_of_generation(32001));  // <|assistant|>
}

TEST(GgmlVocab, Qwen2FixtureKnowsItsChatTokens) {
    const Tokenizer tok = load_file(fixture_path("tokenizer/qwen2.gguf"));
    const int32_t im_start = *tok.find_token("<|im_start|>");
    const int32_t im_end = *tok.find_token("<|im_end|>");
    EXPECT_EQ(im_start, 151644);
    EXPECT_EQ(im_end, 151645);
    EXPECT_EQ(tok.eos_id(), im_end);
    EXPECT_EQ(tok.eot_id(), im_end);
    EXPECT_TRUE(tok.is_end_of_generation(151643));  // <|endoftext|>
    EXPECT_TRUE(tok.is_end_of_generation(*tok.find_token("<|file_sep|>")));
    EXPECT_FALSE(tok.is_end_of_generation(im_start));
    EXPECT_FALSE(tok.is_end_of_generation(9707));  // "Hello"
    EXPECT_EQ(tok.token_type(im_start), TokenType::control);
    EXPECT_EQ(tok.token_type(*tok.find_token("<think>")), TokenType::user_defined);

    const std::string prompt = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n";
    const std::vector<int32_t> ids = tok.encode(prompt, false, true);
    EXPECT_EQ(ids, (std::vector<int32_t>{151644, 872, 198, 13048, 151645, 198, 151644, 77091, 198, 151667, 198}));
    EXPECT_EQ(tok.decode(ids, true), prompt);
    EXPECT_EQ(tok.decode(ids, false), "user\nHi\nassistant\n<think>\n");  // control tokens hidden
}

}  // namespace
}  // namespace ember::test
