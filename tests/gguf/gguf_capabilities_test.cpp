// SPDX-License-Identifier: MIT
#include <optional>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "common/fixture_path.h"
#include "ember/gguf.h"

using namespace ember::gguf;
using ember::test::fixture_path;

namespace {
Capabilities caps_of(const char* name) { return describe(File::open(fixture_path("gguf/valid") / name)); }
}  // namespace

TEST(GgufCapabilities, MtpHead) {
    const Capabilities c = caps_of("mtp.gguf");
    EXPECT_EQ(c.architecture, "qwen35moe");
    EXPECT_EQ(c.mtp_layers, 1u);
    EXPECT_TRUE(c.has_mtp());
    EXPECT_FALSE(c.has_dflash());
}

TEST(GgufCapabilities, MtpDeclaredButTensorsMissing) {
    const Capabilities c = caps_of("mtp_missing.gguf");
    EXPECT_EQ(c.mtp_layers, 1u);
    EXPECT_FALSE(c.mtp_tensors_present);
    EXPECT_FALSE(c.has_mtp());
}

TEST(GgufCapabilities, EmbeddedDflashDraft) {
    const Capabilities c = caps_of("dflash.gguf");
    EXPECT_TRUE(c.dflash_marker);
    EXPECT_EQ(c.dflash_tensors, 2u);
    EXPECT_TRUE(c.has_dflash());
}

// The rule model::is_drafted loads by: a false marker means no draft whatever tensors the file has; without a
// marker, dflash.block_count and dflash.fc.weight make it drafted.
TEST(GgufCapabilities, DflashMarkIsOneRule) {
    const auto file_with = [](std::optional<bool> marker, bool block_count, bool fc, std::vector<std::byte>& bytes) {
        Writer w;
        w.set("general.architecture", std::string("qwen3"));
        if (marker) w.set("dflash.embedded", OwnedValue{*marker});
        if (block_count) w.set("dflash.block_count", uint32_t(1));
        const float zeros[4] = {};
        const int64_t shape[] = {4};
        if (fc) w.add_tensor("dflash.fc.weight", TensorType::F32, shape, std::as_bytes(std::span(zeros)));
        bytes = w.to_bytes();
        return File::from_memory(bytes, "d.gguf");
    };
    std::vector<std::byte> b;
    EXPECT_EQ(dflash_mark(file_with(true, false, false, b)), DflashMark::marked);
    EXPECT_EQ(dflash_mark(file_with(false, true, true, b)), DflashMark::none);
    EXPECT_FALSE(describe(file_with(false, true, true, b)).has_dflash());
    EXPECT_EQ(dflash_mark(file_with(std::nullopt, true, true, b)), DflashMark::unmarked);
    EXPECT_TRUE(describe(file_with(std::nullopt, true, true, b)).has_dflash());
    EXPECT_EQ(dflash_mark(file_with(std::nullopt, true, false, b)), DflashMark::none);
    EXPECT_EQ(dflash_mark(file_with(std::nullopt, false, true, b)), DflashMark::none);
}

TEST(GgufCapabilities, VisionProjector) {
    const Capabilities c = caps_of("mmproj.gguf");
    EXPECT_TRUE(c.vision_projector);
    EXPECT_EQ(c.architecture, "clip");
}

TEST(GgufCapabilities, PlainFile) {
    const Capabilities c = caps_of("rich.gguf");
    EXPECT_FALSE(c.has_mtp());
    EXPECT_FALSE(c.has_dflash());
    EXPECT_FALSE(c.vision_projector);
    EXPECT_FALSE(c.has_chat_template);
    EXPECT_TRUE(caps_of("metadata_only.gguf").has_chat_template);
}
