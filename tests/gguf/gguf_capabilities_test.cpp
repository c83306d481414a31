// SPDX-License-Identifier: MIT
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
