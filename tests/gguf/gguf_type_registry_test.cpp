// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "ember/gguf.h"

using namespace ember::gguf;

TEST(TypeRegistry, RocmFp4FamilyHasTheSpecSizes) {
    // rocmfp4.md §1
    struct Expected { uint32_t id; const char* name; uint32_t bytes; };
    for (const Expected& e : {Expected{100, "q4_0_rocmfp4", 18}, Expected{101, "q4_0_rocmfp4_fast", 17},
                              Expected{102, "q6_0_rocmfpx", 26}, Expected{103, "q8_0_rocmfpx", 33},
                              Expected{104, "q3_0_rocmfpx", 14}}) {
        const TypeTraits* t = find_type(e.id);
        ASSERT_NE(t, nullptr) << e.id;
        EXPECT_EQ(t->name, e.name);
        EXPECT_EQ(t->block_size, 32u);
        EXPECT_EQ(t->block_bytes, e.bytes);
        EXPECT_TRUE(t->quantized);
    }
}

TEST(TypeRegistry, StandardSizes) {
    EXPECT_EQ(traits(TensorType::F32).block_bytes, 4u);
    EXPECT_EQ(traits(TensorType::Q8_0).block_bytes, 34u);
    EXPECT_EQ(traits(TensorType::Q4_K).block_bytes, 144u);
    EXPECT_EQ(traits(TensorType::Q6_K).block_bytes, 210u);
    EXPECT_EQ(traits(TensorType::Q8_K).block_bytes, 292u);
    EXPECT_EQ(traits(TensorType::MXFP4).block_bytes, 17u);
    EXPECT_FALSE(traits(TensorType::BF16).quantized);
}

TEST(TypeRegistry, UnknownAndRemovedIdsAreNotKnown) {
    for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 42u, 99u, 105u, 106u, 1000u})
        EXPECT_EQ(find_type(id), nullptr) << id;
}

TEST(TypeRegistry, NamesRoundTripCaseInsensitively) {
    for (const TypeTraits& t : known_types()) {
        EXPECT_EQ(type_from_name(t.name), t.type);
        std::string upper(t.name);
        for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        EXPECT_EQ(type_from_name(upper), t.type);
    }
    EXPECT_FALSE(type_from_name("q4_2").has_value());
}

TEST(TypeRegistry, RowBytes) {
    EXPECT_EQ(row_bytes(TensorType::Q4_0_ROCMFP4, 4096), 4096u / 32 * 18);
    EXPECT_EQ(row_bytes(TensorType::F16, 7), 14u);
    EXPECT_THROW(row_bytes(TensorType::Q4_K, 32), ember::Error);
    try {
        row_bytes(TensorType::Q8_0, 33);
        FAIL();
    } catch (const ember::Error& e) {
        EXPECT_STREQ(e.what(), "row of 33 weights is not a multiple of the q8_0 block size 32");
    }
}

TEST(TypeRegistry, KnownTypeListNamesEveryType) {
    const std::string list = known_type_list();
    for (const TypeTraits& t : known_types()) EXPECT_NE(list.find(std::string(t.name) + " ("), std::string::npos);
}
