// SPDX-License-Identifier: MIT
// The fit estimate against the numbers of ../specs/qwen35moe.md §5.6 and speculative.md §4, with the model facts
// read from a GGUF carrying the real Qwen3.6-35B-A3B keys.
#include <gtest/gtest.h>

#include "attention_keys.h"
#include "ember/gguf.h"
#include "fit_estimate.h"
#include "model_facts.h"

namespace ember::models {
namespace {

constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kMiB = 1ull << 20;

// A header-only stand-in for Qwen3.6-35B-A3B with MTP: every key of qwen35moe.md §2 and the MTP tensors (tiny).
gguf::File qwen36_file(std::vector<std::byte>& storage, bool mtp) {
    gguf::Writer w;
    test::write_attention_keys(w, {.arch = "qwen35moe", .blocks = mtp ? 41u : 40u, .embedding = 2048, .heads = 16,
                                   .kv_heads = 2, .head_dim = 256, .context = 262144});
    if (mtp) w.set("qwen35moe.nextn_predict_layers", uint32_t(1));
    w.set("qwen35moe.full_attention_interval", uint32_t(4));
    test::write_qwen36_ssm_keys(w);
    static const std::vector<std::byte> zeros(64 * 4);
    const int64_t shape[] = {64};
    if (mtp)
        for (const char* t : {"blk.40.nextn.eh_proj.weight", "blk.40.nextn.enorm.weight", "blk.40.nextn.hnorm.weight"})
            w.add_tensor(t, gguf::TensorType::F32, shape, zeros);
    storage = w.to_bytes();
    return gguf::File::from_memory(storage, "qwen36.gguf");
}

TEST(ModelFacts, Qwen36KvCacheIsTenAttentionLayersPlusMtp) {
    std::vector<std::byte> bytes;
    const ModelFacts f = read_model_facts(qwen36_file(bytes, true));
    EXPECT_TRUE(f.mtp);
    EXPECT_EQ(f.memory.kv_layers, 11u);
    // §5.6: 10 layers x 1024 values per token (20 KiB at f16) + the MTP layer's 1024 values.
    EXPECT_EQ(f.memory.kv_bytes_per_position, 20u * 1024 + 2048);
    EXPECT_EQ(f.context_length, 262144u);
}

TEST(ModelFacts, Qwen36RecurrentStateIs62_8MiB) {
    std::vector<std::byte> bytes;
    const ModelFacts f = read_model_facts(qwen36_file(bytes, false));
    EXPECT_FALSE(f.mtp);
    EXPECT_EQ(f.memory.kv_layers, 10u);
    EXPECT_EQ(f.memory.recurrent_layers, 30u);
    // §5.6: 30 x (24 576 + 524 288) fp32 = 16 465 920 floats.
    EXPECT_EQ(f.memory.recurrent_state_bytes, 16465920ull * 4);
    EXPECT_NEAR(static_cast<double>(f.memory.recurrent_state_bytes) / kMiB, 62.8, 0.05);
}

TEST(FitEstimate, Qwen36RocmFp4At32KContext) {
    std::vector<std::byte> bytes;
    ModelFacts f = read_model_facts(qwen36_file(bytes, true));
    f.weight_bytes = static_cast<uint64_t>(17.79 * kGiB);  // the ROCmFP4 STRIX file (specs/README.md, H200 table)
    const FitInput in = fit_input(f, 32768);
    EXPECT_EQ(in.recurrent_copies, 4u);  // MTP drafts up to 3 tokens: 3 rollback snapshots + the live state

    const FitReport r = estimate_fit(in, MemoryBudget{128 * kGiB, 100 * kGiB, std::nullopt});
    EXPECT_EQ(r.kv_cache, 22528ull * 32768);  // 704 MiB
    EXPECT_EQ(r.kv_cache, 704 * kMiB);
    EXPECT_EQ(r.recurrent_state, 4 * 65863680ull);
    EXPECT_EQ(r.total, f.weight_bytes + 704 * kMiB + 4 * 65863680ull);
    EXPECT_FALSE(r.against_gpu);
    EXPECT_EQ(r.capacity, 128 * kGiB);
    EXPECT_EQ(r.verdict, FitVerdict::Fits);

    // About 18.72 GiB needed: comfortable in 24 GiB, tight in 20 GiB, impossible in 16 GiB of GPU memory.
    EXPECT_EQ(estimate_fit(in, MemoryBudget{128 * kGiB, 0, 24 * kGiB}).verdict, FitVerdict::Fits);
    EXPECT_EQ(estimate_fit(in, MemoryBudget{128 * kGiB, 0, 20 * kGiB}).verdict, FitVerdict::Tight);
    const FitReport small = estimate_fit(in, MemoryBudget{128 * kGiB, 0, 16 * kGiB});
    EXPECT_EQ(small.verdict, FitVerdict::WontFit);
    EXPECT_TRUE(small.against_gpu);
    const std::string line = describe(small);
    EXPECT_NE(line.find("won't fit: needs 18.72 GiB"), std::string::npos) << line;
    EXPECT_NE(line.find("KV cache 704.0 MiB"), std::string::npos) << line;
    EXPECT_NE(line.find("of 16.00 GiB GPU memory"), std::string::npos) << line;
}

// Gemma 3 270M's keys: 18 layers of 1 kv head of 256, a 512-position window, every sixth layer global.
gguf::File gemma3_file(std::vector<std::byte>& storage, const std::vector<bool>* local_layers) {
    gguf::Writer w;
    test::write_attention_keys(w, {.arch = "gemma3", .blocks = 18, .embedding = 640, .heads = 4, .kv_heads = 1,
                                   .head_dim = 256, .window = 512});
    if (local_layers) {
        std::vector<gguf::OwnedValue> list;
        for (bool local : *local_layers) list.emplace_back(local);
        w.set("gemma3.attention.sliding_window_pattern", gguf::make_array(gguf::ValueType::BOOL, std::move(list)));
    }
    storage = w.to_bytes();
    return gguf::File::from_memory(storage, "gemma3.gguf");
}

TEST(FitEstimate, Gemma3LocalLayersKeepOnlyTheirWindow) {
    std::vector<std::byte> bytes;
    const ModelFacts f = read_model_facts(gemma3_file(bytes, nullptr));
    constexpr uint64_t kLayer = 1 * (256 + 256) * 2;  // bytes per position of one layer at f16
    EXPECT_EQ(f.memory.kv_bytes_per_position, 18 * kLayer);
    EXPECT_EQ(f.memory.sliding_kv_bytes_per_position, 15 * kLayer);  // layers 5, 11 and 17 are global
    // At 32768 positions: 3 global layers hold them all, 15 local ones 2 * 512 + 512 rows.
    EXPECT_EQ(estimate_fit(fit_input(f, 32768), {}).kv_cache, 3 * kLayer * 32768 + 15 * kLayer * 1536);
    // Below the local rows every layer holds the whole context.
    EXPECT_EQ(estimate_fit(fit_input(f, 1000), {}).kv_cache, 18 * kLayer * 1000);
    // A per-layer list instead of the default pattern: two local layers.
    std::vector<bool> list(18, false);
    list[0] = list[1] = true;
    const ModelFacts g = read_model_facts(gemma3_file(bytes, &list));
    EXPECT_EQ(g.memory.sliding_kv_bytes_per_position, 2 * kLayer);
}

// gpt-oss-20b's keys: 24 layers of 8 kv heads of 64, a 128-position window on every other layer from the first.
TEST(FitEstimate, GptOssWindowedLayersAlternate) {
    gguf::Writer w;
    test::write_attention_keys(w, {.arch = "gpt-oss", .blocks = 24, .embedding = 2880, .heads = 64, .kv_heads = 8,
                                   .head_dim = 64, .window = 128});
    const std::vector<std::byte> bytes = w.to_bytes();
    const ModelFacts f = read_model_facts(gguf::File::from_memory(bytes, "gpt-oss.gguf"));
    constexpr uint64_t kLayer = 8 * (64 + 64) * 2;
    EXPECT_EQ(f.memory.kv_bytes_per_position, 24 * kLayer);
    EXPECT_EQ(f.memory.sliding_kv_bytes_per_position, 12 * kLayer);
    // At 131072 positions: 12 full layers hold them all, 12 windowed ones 2 * 128 + 512 rows.
    EXPECT_EQ(estimate_fit(fit_input(f, 131072), {}).kv_cache, 12 * kLayer * 131072 + 12 * kLayer * 768);
}

TEST(FitEstimate, KvCacheGrowsLinearlyWithContext) {
    std::vector<std::byte> bytes;
    const ModelFacts f = read_model_facts(qwen36_file(bytes, false));
    const MemoryBudget budget{64 * kGiB, 0, std::nullopt};
    EXPECT_EQ(estimate_fit(fit_input(f, 262144), budget).kv_cache, 20ull * 1024 * 262144);  // 5 GiB at full context
    EXPECT_EQ(estimate_fit(fit_input(f, 0), budget).kv_cache, 0u);
    EXPECT_EQ(fit_input(f, 1).recurrent_copies, 1u);  // no speculation: one state
}

TEST(FitEstimate, DflashDraftKeepsOneSnapshotPerDraftedToken) {
    ModelFacts f;
    f.weight_bytes = 19046930720ull;  // the STRIX_LEAN file
    f.drafted = true;
    f.draft_block_size = 16;
    f.draft_bytes = 747 * kMiB / 2;
    f.memory.recurrent_state_bytes = 65863680;
    f.memory.draft_kv_bytes_per_position = 6ull * 8 * (128 + 128) * 2;  // 6 layers, 8 kv heads, head dim 128
    const FitInput in = fit_input(f, 32768);
    EXPECT_EQ(in.recurrent_copies, 16u);  // speculative.md §4: n_rs_seq = 15 -> 1005 MiB
    const FitReport r = estimate_fit(in, MemoryBudget{128 * kGiB, 0, std::nullopt});
    EXPECT_NEAR(static_cast<double>(r.recurrent_state) / kMiB, 1005.0, 0.5);
    EXPECT_EQ(r.draft_kv_cache, 24576ull * 32768);
    EXPECT_EQ(r.draft_weights, f.draft_bytes);
    EXPECT_EQ(r.total, f.weight_bytes + r.draft_kv_cache + r.recurrent_state);  // draft weights are inside weights
    EXPECT_NE(describe(r).find("incl. draft"), std::string::npos);
}

TEST(FitEstimate, FiveSnapshotsCost376_9MiB) {
    FitInput in;
    in.recurrent_state_bytes = 65863680;
    in.recurrent_copies = 6;  // speculative.md §4: (1 + 5) x 62.8 MiB
    const FitReport r = estimate_fit(in, MemoryBudget{kGiB, 0, std::nullopt});
    EXPECT_NEAR(static_cast<double>(r.recurrent_state) / kMiB, 376.9, 0.05);
}

TEST(FitEstimate, UnknownMemoryAndHugeNumbersNeverFitAndNeverOverflow) {
    FitInput in;
    in.weight_bytes = 1;
    EXPECT_EQ(estimate_fit(in, MemoryBudget{}).verdict, FitVerdict::WontFit);
    in.kv_bytes_per_position = UINT64_MAX / 2;
    in.context = 1ull << 40;
    in.weight_bytes = UINT64_MAX - 5;
    const FitReport r = estimate_fit(in, MemoryBudget{UINT64_MAX, 0, std::nullopt});
    EXPECT_EQ(r.kv_cache, UINT64_MAX);
    EXPECT_EQ(r.total, UINT64_MAX);
    EXPECT_EQ(r.verdict, FitVerdict::Tight);
}

TEST(FitEstimate, FormatsBytes) {
    EXPECT_EQ(format_bytes(512), "512 B");
    EXPECT_EQ(format_bytes(704 * kMiB), "704.0 MiB");
    EXPECT_EQ(format_bytes(static_cast<uint64_t>(17.79 * kGiB)), "17.79 GiB");
    EXPECT_EQ(verdict_name(FitVerdict::Tight), "tight");
}

}  // namespace
}  // namespace ember::models
