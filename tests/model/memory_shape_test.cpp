// SPDX-License-Identifier: MIT
// read_memory_shape through the architecture registry, and estimate_memory_needs built on it: the tiny qwen35moe
// fixture's shape from its hyperparameters, what each RequiredKeys insists on, and architectures Ember does not run.
#include <gtest/gtest.h>

#include "common/fixture_path.h"
#include "ember/gguf.h"
#include "ember/model_info.h"
#include "model/architecture_registry.h"
#include "model/qwen35_hparams.h"

using namespace ember;

namespace {

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

void expect_same_shape(const MemoryShape& a, const MemoryShape& b) {
    EXPECT_EQ(a.kv_layers, b.kv_layers);
    EXPECT_EQ(a.kv_bytes_per_position, b.kv_bytes_per_position);
    EXPECT_EQ(a.sliding_kv_bytes_per_position, b.sliding_kv_bytes_per_position);
    EXPECT_EQ(a.sliding_window, b.sliding_window);
    EXPECT_EQ(a.recurrent_layers, b.recurrent_layers);
    EXPECT_EQ(a.recurrent_state_bytes, b.recurrent_state_bytes);
    EXPECT_EQ(a.draft_kv_bytes_per_position, b.draft_kv_bytes_per_position);
}

// The fixture (make_qwen35moe_fixtures.py): 8 trunk layers, full attention at 3 and 7, one MTP block; 2 kv heads of
// 32; DeltaNet d_k 16, H_k 4, H_v 8 x d_v 16, conv kernel 4.
TEST(MemoryShape, Qwen35FixtureFollowsItsHyperparameters) {
    const gguf::File file = gguf::File::open(test::fixture_path("qwen35moe") / "qwen35moe-f32.gguf");
    const std::optional<MemoryShape> shape = read_memory_shape(file);
    ASSERT_TRUE(shape);
    EXPECT_EQ(shape->kv_layers, 3);
    EXPECT_EQ(shape->recurrent_layers, 6);
    EXPECT_EQ(shape->kv_bytes_per_position, 3u * 2 * (32 + 32) * 2);
    const int64_t conv_dim = 2 * 4 * 16 + 8 * 16;
    EXPECT_EQ(shape->recurrent_state_bytes, 6u * (16 * 8 * 16 + 3 * conv_dim) * 4);
    EXPECT_EQ(shape->n_vocab, file.find_tensor("token_embd.weight")->shape[1]);
    expect_same_shape(*shape, *read_memory_shape(file, RequiredKeys::for_memory_shape));

    const MemoryNeeds f16 = estimate_memory_needs(file, 1000);
    EXPECT_EQ(f16.state, shape->kv_bytes_per_position * 1000 + shape->recurrent_state_bytes * 21);
    const MemoryNeeds q8 = estimate_memory_needs(file, 1000, KvCacheType::q8_0);
    EXPECT_EQ(q8.state, shape->kv_bytes_per_position * 1000 / 2 * 34 / 32 + shape->recurrent_state_bytes * 21);
}

gguf::Writer llama_keys_without_feed_forward() {
    gguf::Writer w;
    w.set("general.architecture", std::string("llama"));
    w.set("llama.block_count", uint32_t(2));
    w.set("llama.embedding_length", uint32_t(64));
    w.set("llama.attention.head_count", uint32_t(4));
    return w;
}

TEST(MemoryShape, OnlyLoadingNeedsTheKeysTheShapeDoesNot) {
    const auto bytes = llama_keys_without_feed_forward().to_bytes();
    const gguf::File file = gguf::File::from_memory(bytes, "no-ffn.gguf");
    EXPECT_EQ(error_of([&] { read_memory_shape(file); }), "no-ffn.gguf: missing key 'llama.feed_forward_length'");
    const std::optional<MemoryShape> shape = read_memory_shape(file, RequiredKeys::for_memory_shape);
    ASSERT_TRUE(shape);
    EXPECT_EQ(shape->kv_layers, 2);
    EXPECT_EQ(shape->kv_bytes_per_position, 2u * 4 * (16 + 16) * 2);
}

TEST(MemoryShape, ArchitecturesEmberDoesNotRunHaveNone) {
    gguf::Writer w;
    w.set("general.architecture", std::string("mamba2"));
    static const std::vector<std::byte> zeros(64 * 4);
    const int64_t shape[] = {64};
    w.add_tensor("token_embd.weight", gguf::TensorType::F32, shape, zeros);
    const auto bytes = w.to_bytes();
    const gguf::File file = gguf::File::from_memory(bytes, "mamba.gguf");
    EXPECT_FALSE(read_memory_shape(file));
    const MemoryNeeds needs = estimate_memory_needs(file, 4096);
    EXPECT_EQ(needs.weights, zeros.size());
    EXPECT_EQ(needs.state, 0u);
}

TEST(ArchitectureRegistry, EverySupportedArchitectureLoadsAndHasAMemoryShape) {
    for (std::string_view name : supported_architectures()) {
        const model::ArchitectureEntry* entry = model::find_architecture(name);
        ASSERT_NE(entry, nullptr) << name;
        EXPECT_NE(entry->load, nullptr) << name;
        EXPECT_NE(entry->memory_shape, nullptr) << name;
    }
    EXPECT_EQ(model::find_architecture("mamba2"), nullptr);
}

// Which architectures have sliding-window layers, and their period when a file gives no pattern, is the registry's:
// the same keys make 10 of gemma3's 12 layers local, 6 of gpt-oss's, and none of llama's (which ignores them).
TEST(ArchitectureRegistry, OwnsTheSlidingWindowPeriod) {
    EXPECT_EQ(model::find_architecture("gemma3")->sliding_window_period, 6);
    EXPECT_EQ(model::find_architecture("gpt-oss")->sliding_window_period, 2);
    EXPECT_EQ(model::find_architecture("llama")->sliding_window_period, 0);
    struct Case {
        std::string arch;
        uint64_t local_layers;
        int64_t window;
    };
    for (const auto& [arch, local_layers, window] :
         std::vector<Case>{{"gemma3", 10, 8}, {"gpt-oss", 6, 8}, {"llama", 0, 0}}) {
        gguf::Writer w;
        w.set("general.architecture", arch);
        w.set(arch + ".block_count", uint32_t(12));
        w.set(arch + ".embedding_length", uint32_t(64));
        w.set(arch + ".attention.head_count", uint32_t(4));
        w.set(arch + ".attention.sliding_window", uint32_t(8));
        const auto bytes = w.to_bytes();
        const gguf::File file = gguf::File::from_memory(bytes, arch + ".gguf");
        const std::optional<MemoryShape> shape = read_memory_shape(file, RequiredKeys::for_memory_shape);
        ASSERT_TRUE(shape) << arch;
        const uint64_t layer_bytes = 4u * (16 + 16) * 2;
        EXPECT_EQ(shape->sliding_window, window) << arch;
        EXPECT_EQ(shape->kv_bytes_per_position, 12 * layer_bytes) << arch;
        EXPECT_EQ(shape->sliding_kv_bytes_per_position, local_layers * layer_bytes) << arch;
    }
}

}  // namespace
