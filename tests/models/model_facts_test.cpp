// SPDX-License-Identifier: MIT
// Model facts of the fixture files written by the gguf package, against numbers the fixture script computed from
// the spec formulas (tests/fixtures/make_models_fixtures.py, EXPECTED.json).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "attention_keys.h"
#include "common/fixture_path.h"
#include "ember/gguf.h"
#include "model/qwen35_hparams.h"
#include "model_facts.h"

namespace ember::models {
namespace {

nlohmann::json expected() {
    std::ifstream in(test::fixture_path("models/EXPECTED.json"));
    return nlohmann::json::parse(in);
}

ModelFacts facts_of(const std::string& relative) {
    return read_model_facts(gguf::File::open(test::fixture_path("models/hub/" + relative)));
}

void expect_shape(const ModelFacts& f, const nlohmann::json& e) {
    EXPECT_EQ(f.memory.kv_layers, e["kv_layers"].get<uint32_t>());
    EXPECT_EQ(f.memory.kv_bytes_per_position, e["kv_bytes_per_position"].get<uint64_t>());
    EXPECT_EQ(f.memory.recurrent_layers, e["recurrent_layers"].get<uint32_t>());
    EXPECT_EQ(f.memory.recurrent_state_bytes, e["recurrent_state_bytes"].get<uint64_t>());
    EXPECT_EQ(f.context_length, e["context_length"].get<uint64_t>());
}

TEST(ModelFactsFixture, MtpModelWithThinkingTemplate) {
    const ModelFacts f = facts_of("ember-test/Tiny-MTP-GGUF/Tiny-MTP-Q8_0.gguf");
    expect_shape(f, expected()["mtp_model"]);
    EXPECT_EQ(f.architecture, "qwen35moe");
    EXPECT_EQ(f.name, "Tiny MTP");
    EXPECT_TRUE(f.mtp);
    EXPECT_FALSE(f.drafted);
    EXPECT_TRUE(f.chat_template);
    EXPECT_TRUE(f.thinking_template);
    EXPECT_EQ(f.main_quant(), "q8_0");
    ASSERT_EQ(f.quant_types.size(), 2u);
    EXPECT_EQ(f.quant_types[1].first, "f32");
    EXPECT_GT(f.weight_bytes, 3u << 20);
    EXPECT_LT(f.weight_bytes, f.file_bytes);
}

TEST(ModelFactsFixture, DraftedModel) {
    const ModelFacts f = facts_of("ember-test/Tiny-DFlash-GGUF/Tiny-DFlash-Q8_0.gguf");
    const nlohmann::json e = expected()["drafted_model"];
    expect_shape(f, e);
    EXPECT_TRUE(f.drafted);
    EXPECT_FALSE(f.mtp);
    EXPECT_FALSE(f.thinking_template);
    EXPECT_EQ(f.draft_bytes, e["draft_bytes"].get<uint64_t>());
    EXPECT_EQ(f.memory.draft_kv_bytes_per_position, e["draft_kv_bytes_per_position"].get<uint64_t>());
    EXPECT_EQ(f.draft_block_size, e["draft_block_size"].get<uint32_t>());
}

TEST(ModelFactsFixture, VisionProjector) {
    const ModelFacts f = facts_of("ember-test/Tiny-MTP-GGUF/mmproj-F32.gguf");
    EXPECT_TRUE(f.vision_projector);
    EXPECT_EQ(f.memory.kv_layers, 0u);
    EXPECT_EQ(f.memory.recurrent_state_bytes, 0u);
}

TEST(ModelFacts, ImpossibleBlockCountIsAnErrorNamingTheKey) {
    gguf::Writer w;
    w.set("general.architecture", std::string("llama"));
    w.set("llama.block_count", int64_t(-3));
    const auto bytes = w.to_bytes();
    try {
        read_model_facts(gguf::File::from_memory(bytes, "bad.gguf"));
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "bad.gguf: key 'llama.block_count' is -3, out of range");
    }
}

// The engine's reader decides the layer pattern: without full_attention_interval every fourth trunk layer is full
// attention (the model manager once read the missing key as 0, every layer recurrent).
TEST(ModelFacts, Qwen35AttentionLayersWithoutIntervalAreTheEngines) {
    gguf::Writer w;
    test::write_attention_keys(w, {.arch = "qwen35moe", .blocks = 41, .embedding = 2048, .heads = 16, .kv_heads = 2,
                                   .head_dim = 256});
    w.set("qwen35moe.nextn_predict_layers", uint32_t(1));
    test::write_qwen36_ssm_keys(w);
    for (const auto& [key, value] : {std::pair{"qwen35moe.expert_count", 256}, {"qwen35moe.expert_used_count", 8},
                                     {"qwen35moe.expert_feed_forward_length", 512},
                                     {"qwen35moe.expert_shared_feed_forward_length", 512}})
        w.set(key, uint32_t(value));
    const auto bytes = w.to_bytes();
    const gguf::File file = gguf::File::from_memory(bytes, "no-interval.gguf");
    const model::Qwen35HParams hp = model::read_qwen35_hparams(file);
    const auto attention = std::count(hp.recurrent.begin(), hp.recurrent.end(), false);
    const ModelFacts f = read_model_facts(file);
    EXPECT_EQ(f.memory.kv_layers, attention);
    EXPECT_EQ(f.memory.kv_layers, 11);  // 10 trunk layers + the MTP layer
    EXPECT_EQ(f.memory.recurrent_layers, hp.n_layer - 10);
}

// An architecture the engine does not run still lists with its size, quant types and capabilities, whatever its
// shape keys hold; it has no memory shape.
TEST(ModelFacts, UnknownArchitectureHasFactsButNoMemoryShape) {
    gguf::Writer w;
    w.set("general.architecture", std::string("mamba2"));
    w.set("mamba2.block_count", int64_t(-3));
    w.set("mamba2.context_length", uint32_t(2048));
    w.set("tokenizer.chat_template", std::string("{{ '<think>' }}"));
    static const std::vector<std::byte> zeros(64 * 4);
    const int64_t shape[] = {64};
    w.add_tensor("token_embd.weight", gguf::TensorType::F32, shape, zeros);
    const auto bytes = w.to_bytes();
    const ModelFacts f = read_model_facts(gguf::File::from_memory(bytes, "mamba.gguf"));
    EXPECT_EQ(f.architecture, "mamba2");
    EXPECT_EQ(f.file_bytes, bytes.size());
    EXPECT_EQ(f.context_length, 2048u);
    EXPECT_EQ(f.main_quant(), "f32");
    EXPECT_TRUE(f.thinking_template);
    EXPECT_EQ(f.memory.kv_layers, 0);
    EXPECT_EQ(f.memory.kv_bytes_per_position, 0u);
}

TEST(ModelFacts, PlainTransformerUsesEveryLayerAndDefaultHeadDim) {
    gguf::Writer w;
    test::write_attention_keys(w, {.arch = "llama", .blocks = 30, .embedding = 576, .heads = 9, .kv_heads = 3,
                                   .context = 8192});
    const auto bytes = w.to_bytes();
    const ModelFacts f = read_model_facts(gguf::File::from_memory(bytes, "smol.gguf"));
    EXPECT_EQ(f.memory.kv_layers, 30u);
    EXPECT_EQ(f.memory.kv_bytes_per_position, 30u * 3 * (64 + 64) * 2);  // head dim 576 / 9 = 64
    EXPECT_EQ(f.memory.recurrent_state_bytes, 0u);
}

TEST(ModelFacts, ThinkingTemplateDetection) {
    EXPECT_TRUE(template_has_thinking("{{ '<|im_start|>assistant\\n<think>\\n' }}"));
    EXPECT_FALSE(template_has_thinking("{{ messages }}"));
}

}  // namespace
}  // namespace ember::models
