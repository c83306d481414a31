// SPDX-License-Identifier: MIT
// Ember's writer read back by Ember's reader. (The interop tests read its output with the gguf package.)
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "ember/gguf.h"

using namespace ember::gguf;

namespace {

std::vector<std::byte> bytes_of(std::initializer_list<uint8_t> v) {
    std::vector<std::byte> out;
    for (uint8_t b : v) out.push_back(std::byte{b});
    return out;
}

std::filesystem::path temp_dir() {
    auto dir = std::filesystem::temp_directory_path() /
               ("ember_writer_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

}  // namespace

TEST(GgufWriter, EveryValueTypeRoundTrips) {
    Writer w;
    w.set("general.architecture", "llama");  // a string literal must become a string, not a bool
    w.set("u8", uint8_t{250});
    w.set("i8", int8_t{-5});
    w.set("u16", uint16_t{65000});
    w.set("i16", int16_t{-300});
    w.set("u32", uint32_t{4000000000u});
    w.set("i32", int32_t{-7});
    w.set("f32", 1.5f);
    w.set("bool", true);
    w.set("string", std::string("text"));
    w.set("empty", std::string());
    w.set("u64", uint64_t{1} << 63);
    w.set("i64", int64_t{-1} << 62);
    w.set("f64", 0.25);
    w.set("strings", make_string_array({"a", "", "ccc"}));
    w.set("empty_array", make_array(ValueType::I32, {}));
    w.set("nested", make_array(ValueType::ARRAY, {make_array(ValueType::U8, {uint8_t{1}, uint8_t{2}}),
                                                 make_array(ValueType::U8, {})}));
    const std::vector<std::byte> bytes = w.to_bytes();
    const File f = File::from_memory(bytes, "memory");

    EXPECT_EQ(f.at("general.architecture").type(), ValueType::STRING);
    EXPECT_EQ(f.get_string("general.architecture"), "llama");
    EXPECT_EQ(f.get_int("u8"), 250);
    EXPECT_EQ(f.get_int("i8"), -5);
    EXPECT_EQ(f.get_int("u16"), 65000);
    EXPECT_EQ(f.get_int("i16"), -300);
    EXPECT_EQ(f.get_u32("u32"), 4000000000u);
    EXPECT_EQ(f.get_int("i32"), -7);
    EXPECT_EQ(f.get_float("f32"), 1.5);
    EXPECT_TRUE(f.get_bool("bool"));
    EXPECT_EQ(f.get_string("string"), "text");
    EXPECT_EQ(f.get_string("empty"), "");
    EXPECT_EQ(f.at("u64").type(), ValueType::U64);
    EXPECT_EQ(f.get_int("i64"), int64_t{-1} << 62);
    EXPECT_EQ(f.get_float("f64"), 0.25);
    EXPECT_EQ(f.at("strings").strings(), (std::vector<std::string_view>{"a", "", "ccc"}));
    EXPECT_EQ(f.at("empty_array").size(), 0u);
    EXPECT_EQ(f.at("empty_array").element_type(), ValueType::I32);
    EXPECT_EQ(f.at("nested").item(0).int_array(), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(f.at("nested").item(1).size(), 0u);

    // Copying every value through to_owned gives the same bytes again.
    Writer copy;
    for (const KeyValue& kv : f.metadata()) copy.set(std::string(kv.key), to_owned(kv.value));
    EXPECT_EQ(copy.to_bytes(), bytes);
}

TEST(GgufWriter, SetReplacesInPlaceAndRemoveDeletes) {
    Writer w;
    w.set("a", int32_t{1});
    w.set("b", int32_t{2});
    w.set("a", int32_t{3});
    w.remove("b");
    const auto bytes = w.to_bytes();
    const File f = File::from_memory(bytes, "memory");
    ASSERT_EQ(f.metadata().size(), 1u);
    EXPECT_EQ(f.get_int("a"), 3);
    EXPECT_FALSE(w.has("b"));
}

TEST(GgufWriter, TensorsAreAlignedAndProducersFillThem) {
    Writer w(64);
    w.set("general.architecture", "test");
    const std::vector<std::byte> q8 = std::vector<std::byte>(2 * 34, std::byte{7});
    const int64_t q8_shape[] = {64, 1};
    w.add_tensor("q8", TensorType::Q8_0, q8_shape, q8);
    const int64_t f32_shape[] = {3};
    w.add_tensor("f32", TensorType::F32, f32_shape, [](std::span<std::byte> out) {
        const float v[3] = {1.0f, 2.0f, 3.0f};
        std::memcpy(out.data(), v, sizeof v);
    });
    const auto bytes = w.to_bytes();
    const File f = File::from_memory(bytes, "memory");
    EXPECT_EQ(f.alignment(), 64u);
    EXPECT_EQ(f.metadata().back().key, "general.alignment");
    ASSERT_EQ(f.tensors().size(), 2u);
    EXPECT_EQ(f.tensor("q8").offset, 0u);
    EXPECT_EQ(f.tensor("f32").offset, 128u);
    EXPECT_EQ(f.data_offset() % 64, 0u);
    EXPECT_EQ(static_cast<uint8_t>(f.tensor_data(f.tensor("q8"))[67]), 7);
    float v[3];
    std::memcpy(v, f.tensor_data(f.tensor("f32")).data(), sizeof v);
    EXPECT_EQ(v[2], 3.0f);
}

TEST(GgufWriter, RejectsInconsistentInput) {
    Writer w;
    const int64_t shape[] = {33};
    EXPECT_THROW(w.add_tensor("bad_row", TensorType::Q8_0, shape, Writer::Producer{}), ember::Error);
    const int64_t ok_shape[] = {32};
    EXPECT_THROW(w.add_tensor("wrong_size", TensorType::F32, ok_shape, bytes_of({1, 2, 3})), ember::Error);
    w.add_tensor("t", TensorType::F32, ok_shape, [](std::span<std::byte>) {});
    EXPECT_THROW(w.add_tensor("t", TensorType::F32, ok_shape, [](std::span<std::byte>) {}), ember::Error);
    const int64_t five[] = {1, 1, 1, 1, 1};
    EXPECT_THROW(w.add_tensor("five", TensorType::F32, five, [](std::span<std::byte>) {}), ember::Error);
    EXPECT_THROW(w.add_tensor("", TensorType::F32, ok_shape, [](std::span<std::byte>) {}), ember::Error);
    EXPECT_THROW(w.set("", int32_t{1}), ember::Error);
    EXPECT_THROW(w.set("general.alignment", uint32_t{64}), ember::Error);
    EXPECT_THROW(w.set("mixed", make_array(ValueType::I32, {int32_t{1}, std::string("x")})), ember::Error);
    EXPECT_THROW(Writer(48), ember::Error);
}

TEST(GgufWriter, WriteIsAtomic) {
    const auto dir = temp_dir();
    const auto path = dir / "out.gguf";
    {
        std::ofstream(path) << "previous content";
    }
    Writer failing;
    const int64_t shape[] = {4};
    failing.add_tensor("t", TensorType::F32, shape, [](std::span<std::byte>) { throw ember::Error("producer failed"); });
    EXPECT_THROW(failing.write(path), ember::Error);
    // The old file is untouched and no partial file is left behind.
    std::ifstream in(path);
    std::string content;
    std::getline(in, content);
    EXPECT_EQ(content, "previous content");
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);

    Writer ok;
    ok.set("k", int32_t{5});
    ok.write(path);
    EXPECT_EQ(File::open(path).get_int("k"), 5);
    std::filesystem::remove_all(dir);
}

TEST(GgufWriter, UnwritableDestinationIsOneLine) {
    Writer w;
    try {
        w.write("/nonexistent-dir/out.gguf");
        FAIL();
    } catch (const ember::Error& e) {
        EXPECT_STREQ(e.what(), "/nonexistent-dir/out.gguf: cannot create: No such file or directory");
    }
}
