// SPDX-License-Identifier: MIT
// engine/model/dflash_file: the draft checks of drafted-gguf.md §5-§6 on the fixtures of
// tests/fixtures/make_dflash_fixtures.py (every bad file's exact one-line error, the warnings, the values read),
// and on files edited in memory (absurd values give one-line errors, never a hang or a huge allocation).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error_message.h"
#include "common/fixture_path.h"
#include "ember/dflash_file.h"

using namespace ember;
using ember::test::fixture_path;
using model::DFlashInfo;

namespace {

using ember::test::error_of;

std::filesystem::path dflash_dir() {
    return fixture_path("dflash");
}

nlohmann::json read_json(const std::filesystem::path& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

// A copy of a drafted fixture with keys replaced or removed and tensors left out; the tensor data stays in the
// source mapping, so the copy is as small as the fixture.
struct EditedFile {
    gguf::File source;
    std::vector<std::byte> bytes;
    gguf::File file;

    EditedFile(const std::string& name,
               const std::vector<std::pair<std::string, std::optional<gguf::OwnedValue>>>& keys,
               const std::vector<std::string>& drop_tensors = {})
        : source(gguf::File::open(dflash_dir() / name)), file(build(keys, drop_tensors)) {}

private:
    gguf::File build(const std::vector<std::pair<std::string, std::optional<gguf::OwnedValue>>>& keys,
                     const std::vector<std::string>& drop_tensors) {
        gguf::Writer w(source.alignment());
        for (const gguf::KeyValue& kv : source.metadata()) w.set(std::string(kv.key), gguf::to_owned(kv.value));
        for (const auto& [key, value] : keys) {
            if (value)
                w.set(key, *value);
            else
                w.remove(key);
        }
        for (const gguf::TensorInfo& t : source.tensors())
            if (std::find(drop_tensors.begin(), drop_tensors.end(), t.name) == drop_tensors.end())
                w.add_tensor(std::string(t.name), t.type, std::span(t.shape.data(), t.n_dims), source.tensor_data(t));
        bytes = w.to_bytes();
        return gguf::File::from_memory(bytes, "edited.gguf");
    }
};

}  // namespace

TEST(DFlashFile, EveryBadDraftedFileGivesItsOneLineError) {
    const nlohmann::json expected = read_json(dflash_dir() / "bad" / "EXPECTED.json");
    ASSERT_GE(expected.size(), 7u);
    for (const auto& [name, error] : expected.items()) {
        const std::filesystem::path path = dflash_dir() / "bad" / name;
        const gguf::File file = gguf::File::open(path);
        EXPECT_TRUE(model::is_drafted(file)) << name;
        const std::string got = error_of([&] { model::find_dflash(file); });
        EXPECT_EQ(got, path.string() + ": " + error.get<std::string>()) << name;
        EXPECT_EQ(got.find('\n'), std::string::npos) << name;
    }
}

TEST(DFlashFile, DraftedFixturesReadBack) {
    const nlohmann::json manifest = read_json(dflash_dir() / "MANIFEST.json");
    for (const auto& [name, entry] : manifest.items()) {
        const gguf::File drafted = gguf::File::open(dflash_dir() / name);
        std::vector<std::string> warnings;
        const std::optional<DFlashInfo> info =
            model::find_dflash(drafted, [&](const std::string& w) { warnings.push_back(w); });
        ASSERT_TRUE(info) << name;
        EXPECT_TRUE(warnings.empty()) << name << ": " << warnings.front();
        EXPECT_EQ(info->prefix, "dflash.");
        EXPECT_EQ(info->n_layer, 2);
        EXPECT_EQ(info->n_embd, 64);

        // The standalone draft it was made from gives the same values against its target.
        const gguf::File target = gguf::File::open(dflash_dir() / entry["target"].get<std::string>());
        const gguf::File draft = gguf::File::open(dflash_dir() / entry["draft"].get<std::string>());
        EXPECT_FALSE(model::find_dflash(target)) << "a plain target carries no draft";
        const DFlashInfo standalone = model::read_dflash(draft, "", model::dflash_target(target));
        EXPECT_EQ(standalone.prefix, "");
        EXPECT_EQ(standalone.target_layers, info->target_layers);
        EXPECT_EQ(standalone.block_size, info->block_size);
        EXPECT_EQ(standalone.mask_token, info->mask_token);
        EXPECT_EQ(standalone.head_dim, info->head_dim);
        EXPECT_EQ(standalone.has_biases, info->has_biases);
        // and the keys read as found, which checks nothing, are the same
        const DFlashInfo peek = model::read_dflash_keys(draft, model::DFlashKeys::as_found);
        EXPECT_EQ(peek.prefix, "");
        EXPECT_EQ(peek.target_layers, info->target_layers);
        EXPECT_EQ(peek.mask_token, info->mask_token);
    }
}

TEST(DFlashFile, ValuesOfTheQwen3Drafts) {
    const gguf::File file = gguf::File::open(dflash_dir() / "qwen3-drafted.gguf");
    const DFlashInfo info = *model::find_dflash(file);
    EXPECT_EQ(info.n_head, 4);
    EXPECT_EQ(info.n_head_kv, 2);
    EXPECT_EQ(info.head_dim, 32);
    EXPECT_EQ(info.n_ff, 96);
    EXPECT_EQ(info.block_size, 8);
    EXPECT_EQ(info.target_layers, (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(info.mask_token, 266);  // <|endoftext|>
    EXPECT_FLOAT_EQ(info.rope_base, 1e6f);
    EXPECT_FLOAT_EQ(info.eps, 1e-6f);
    EXPECT_FALSE(info.has_biases);

    const DFlashInfo b16 = *model::find_dflash(gguf::File::open(dflash_dir() / "qwen3-b16-drafted.gguf"));
    EXPECT_EQ(b16.block_size, 16);
    EXPECT_EQ(b16.head_dim, 16);
    EXPECT_EQ(b16.target_layers, (std::vector<int64_t>{1, 1, 2}));
    EXPECT_TRUE(b16.has_biases);

    const DFlashInfo moe = *model::find_dflash(gguf::File::open(dflash_dir() / "qwen35moe-b16-drafted.gguf"));
    EXPECT_EQ(moe.target_layers, (std::vector<int64_t>{2, 5, 8}));  // 8 = the trunk's n_layer (MTP block excluded)
    EXPECT_EQ(moe.n_head_kv, 1);
    EXPECT_EQ(moe.mask_token, 268);
}

TEST(DFlashFile, TargetDimensionsLeaveOutTheMtpBlock) {
    const model::DFlashTarget t = model::dflash_target(gguf::File::open(dflash_dir() / "qwen35moe-f32.gguf"));
    EXPECT_EQ(t.n_embd, 64);
    EXPECT_EQ(t.n_layer, 8);
    EXPECT_EQ(t.n_vocab, 273);
}

TEST(DFlashFile, WarningCases) {
    const nlohmann::json expected = read_json(dflash_dir() / "warn" / "EXPECTED.json");
    for (const auto& [name, entry] : expected.items()) {
        const gguf::File file = gguf::File::open(dflash_dir() / "warn" / name);
        std::vector<std::string> warnings;
        const std::optional<DFlashInfo> info =
            model::find_dflash(file, [&](const std::string& w) { warnings.push_back(w); });
        ASSERT_TRUE(info) << name;
        EXPECT_EQ(info->mask_token, entry["mask"].get<int>()) << name;
        ASSERT_EQ(warnings.size(), 1u) << name;
        EXPECT_NE(warnings[0].find(entry["warning"].get<std::string>()), std::string::npos) << warnings[0];
        EXPECT_TRUE(warnings[0].starts_with(file.name() + ": ")) << warnings[0];
    }
}

TEST(DFlashFile, BothArchitectureNamesMakeAStandaloneDraft) {
    EXPECT_TRUE(model::is_draft_architecture("dflash"));
    EXPECT_TRUE(model::is_draft_architecture("dflash-draft"));
    EXPECT_FALSE(model::is_draft_architecture("qwen3"));
    EXPECT_FALSE(model::is_draft_architecture(""));
    EXPECT_FALSE(model::is_draft_architecture("dflash.draft"));

    const gguf::File draft = gguf::File::open(dflash_dir() / "draft-qwen3.gguf");
    ASSERT_EQ(draft.get_string("general.architecture"), "dflash");
    EditedFile alias("draft-qwen3.gguf", {{"general.architecture", gguf::OwnedValue{std::string("dflash-draft")}}});
    EditedFile nameless("draft-qwen3.gguf", {{"general.architecture", std::nullopt}});
    EditedFile numbered("draft-qwen3.gguf", {{"general.architecture", gguf::OwnedValue{uint32_t{7}}}});
    const gguf::File drafted = gguf::File::open(dflash_dir() / "qwen3-drafted.gguf");
    EXPECT_TRUE(model::is_standalone_draft(draft));
    EXPECT_TRUE(model::is_standalone_draft(alias.file));
    EXPECT_FALSE(model::is_standalone_draft(nameless.file));
    EXPECT_FALSE(model::is_standalone_draft(drafted));
    EXPECT_EQ(error_of([&] { model::is_standalone_draft(numbered.file); }),
              "edited.gguf: key 'general.architecture' has type u32, expected string");
    // The keys' reader takes its prefix from the same rule.
    EXPECT_EQ(model::read_dflash_keys(draft, model::DFlashKeys::as_found).prefix, "");
    EXPECT_EQ(model::read_dflash_keys(alias.file, model::DFlashKeys::as_found).prefix, "");
    EXPECT_EQ(model::read_dflash_keys(drafted, model::DFlashKeys::as_found).prefix, "dflash.");
}

// One reader of the keys: as found, a missing or out-of-range key is left as it is where the checked read fails.
TEST(DFlashFile, KeysReadAsFoundOrChecked) {
    const gguf::File drafted = gguf::File::open(dflash_dir() / "qwen3-drafted.gguf");
    const DFlashInfo checked = model::read_dflash_keys(drafted, model::DFlashKeys::checked);
    const DFlashInfo found = model::read_dflash_keys(drafted, model::DFlashKeys::as_found);
    EXPECT_EQ(found.n_layer, checked.n_layer);
    EXPECT_EQ(found.n_head_kv, checked.n_head_kv);
    EXPECT_EQ(found.head_dim, checked.head_dim);
    EXPECT_EQ(found.block_size, checked.block_size);
    EXPECT_TRUE(checked.target_layers.empty()) << "the checked read leaves them to read_dflash";
    EXPECT_FALSE(found.target_layers.empty());

    using V = std::optional<gguf::OwnedValue>;
    EditedFile broken("qwen3-drafted.gguf", {{"dflash.block_count", V{}}, {"dflash.embedding_length", V{uint32_t{0}}}});
    const DFlashInfo as_found = model::read_dflash_keys(broken.file, model::DFlashKeys::as_found);
    EXPECT_EQ(as_found.n_layer, 0);
    EXPECT_EQ(as_found.n_embd, 0);
    EXPECT_EQ(error_of([&] { model::read_dflash_keys(broken.file, model::DFlashKeys::checked); }),
              "edited.gguf: missing key 'dflash.block_count'");
    EditedFile mistyped("qwen3-drafted.gguf", {{"dflash.block_count", V{std::string("two")}}});
    EXPECT_EQ(error_of([&] { model::read_dflash_keys(mistyped.file, model::DFlashKeys::as_found); }),
              "edited.gguf: key 'dflash.block_count' has type string, expected an integer");
}

TEST(DFlashFile, AFalseMarkerMeansNotDrafted) {
    EditedFile edited("qwen3-drafted.gguf", {{"dflash.embedded", gguf::OwnedValue{false}}});
    EXPECT_FALSE(model::is_drafted(edited.file));
    EXPECT_FALSE(model::find_dflash(edited.file));
}

TEST(DFlashFile, StandaloneChecksUseTheirOwnWording) {
    const gguf::File target = gguf::File::open(dflash_dir() / "qwen3-f32.gguf");
    const gguf::File no_mask = gguf::File::open(dflash_dir() / "bad_merge" / "no_mask_token.gguf");
    EXPECT_EQ(
        error_of([&] { model::read_dflash(no_mask, "", model::dflash_target(target)); }),
        no_mask.name() + ": DFlash draft has no mask token (dflash.mask_token_id or tokenizer.ggml.mask_token_id); "
                         "without it drafting would silently do nothing");
    // A standalone draft's tensors carry no prefix; a prefix finds none of them.
    const gguf::File draft = gguf::File::open(dflash_dir() / "draft-qwen3.gguf");
    EXPECT_EQ(error_of([&] { model::read_dflash(draft, "dflash.", 64, 2, 269); }),
              draft.name() + ": missing draft tensor 'dflash.fc.weight'");
    // The explicit-number overload checks the same things.
    EXPECT_EQ(error_of([&] { model::read_dflash(draft, "", 64, 1, 269); }),
              draft.name() + ": dflash.target_layers entry 2 is outside the target's layers 1..1");
    EXPECT_EQ(error_of([&] { model::read_dflash(draft, "", 64, 2, 266); }),
              draft.name() + ": DFlash mask token id 266 is outside the vocabulary (n_vocab 266); without it drafting "
                             "would silently do nothing");
}

TEST(DFlashFile, AbsurdValuesGiveOneLineErrors) {
    using V = std::optional<gguf::OwnedValue>;
    const std::vector<std::pair<std::vector<std::pair<std::string, V>>, std::string>> cases = {
        {{{"dflash.block_count", V{uint64_t{1} << 40}}}, "key 'dflash.block_count' is 1099511627776, out of range"},
        {{{"dflash.block_count", V{int32_t{-3}}}}, "key 'dflash.block_count' is -3, out of range"},
        {{{"dflash.block_count", V{std::string("two")}}},
         "key 'dflash.block_count' has type string, expected an integer"},
        {{{"dflash.block_count", V{uint32_t{3}}}}, "missing draft tensor 'dflash.blk.2.attn_norm.weight'"},
        {{{"dflash.embedding_length", V{uint32_t{0}}}}, "key 'dflash.embedding_length' is 0, out of range"},
        {{{"dflash.attention.head_count_kv", V{uint32_t{3}}}},
         "key 'dflash.attention.head_count_kv' is 3, which does not divide the head count 4"},
        {{{"dflash.attention.value_length", V{uint32_t{16}}}},
         "key 'dflash.attention.value_length' is 16, expected the key_length 32"},
        {{{"dflash.attention.key_length", V{uint32_t{33}}}},
         "key 'dflash.attention.key_length' is 33, must be even (NeoX RoPE over the whole head)"},
        {{{"dflash.attention.layer_norm_rms_epsilon", V{}}}, "missing key 'dflash.attention.layer_norm_rms_epsilon'"},
        {{{"dflash.rope.freq_base", V{-1.0f}}}, "key 'dflash.rope.freq_base' must be positive"},
        {{{"dflash.block_size", V{int32_t{-5}}}}, "dflash.block_size is -5, expected at least 2"},
        {{{"dflash.target_layers", V{gguf::make_string_array({"1", "2"})}}},
         "key 'dflash.target_layers' has type array[string], expected array of integers"},
        {{{"dflash.target_layers", V{std::string("1,2")}}},
         "key 'dflash.target_layers' has type string, expected array of integers"},
        {{{"dflash.target_layers", V{gguf::make_array(gguf::ValueType::I32, {})}}}, "dflash.target_layers is empty"},
        {{{"dflash.target_layers", V{gguf::make_array(gguf::ValueType::I64, {int64_t{1}, int64_t{1} << 62})}}},
         "dflash.target_layers entry 4611686018427387904 is outside the target's layers 1..2"},
        {{{"dflash.mask_token_id", V{int32_t{-1}}}, {"tokenizer.ggml.mask_token_id", V{}}},
         "DFlash mask token id -1 is outside the vocabulary (n_vocab 269); without it drafting would silently do "
         "nothing"},
        {{{"dflash.mask_token_id", V{std::string("266")}}},
         "key 'dflash.mask_token_id' has type string, expected an integer"},
        {{{"dflash.attention.sliding_window_pattern", V{gguf::make_array(gguf::ValueType::BOOL, {true})}}},
         "key 'dflash.attention.sliding_window_pattern' has 1 entries, expected dflash.block_count 2"},
    };
    for (const auto& [keys, error] : cases) {
        EditedFile edited("qwen3-drafted.gguf", keys);
        EXPECT_EQ(error_of([&] { model::find_dflash(edited.file); }), "edited.gguf: " + error);
    }
}

TEST(DFlashFile, OptionalKeysAndTensors) {
    // Without the block size the default 16 applies; a sliding window is read with its pattern.
    EditedFile edited("qwen3-drafted.gguf", {{"dflash.block_size", std::nullopt},
                                             {"dflash.attention.sliding_window", gguf::OwnedValue{uint32_t{4096}}},
                                             {"dflash.attention.sliding_window_pattern",
                                              gguf::make_array(gguf::ValueType::BOOL, {true, false})}});
    const DFlashInfo info = *model::find_dflash(edited.file);
    EXPECT_EQ(info.block_size, 16);
    EXPECT_EQ(info.sliding_window, 4096);
    EXPECT_EQ(info.sliding_layers, (std::vector<bool>{true, false}));
    // Biases are optional one by one.
    EditedFile fewer_biases("qwen3-b16-drafted.gguf", {}, {"dflash.blk.0.attn_q.bias", "dflash.blk.1.attn_v.bias"});
    EXPECT_TRUE(model::find_dflash(fewer_biases.file)->has_biases);
    // A missing marker with the draft's keys and fc tensor is the published fused layout: drafted, with a warning.
    EditedFile no_marker("qwen3-drafted.gguf", {{"dflash.embedded", gguf::OwnedValue{uint32_t{1}}}});
    std::vector<std::string> warnings;
    EXPECT_TRUE(model::find_dflash(no_marker.file, [&](const std::string& w) { warnings.push_back(w); }));
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("dflash.embedded is not a bool"), std::string::npos);
}
