// SPDX-License-Identifier: MIT
// The reader on files written by the gguf package (tests/fixtures/make_gguf_fixtures.py).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "common/error_message.h"
#include "common/fixture_path.h"
#include "ember/gguf.h"

using namespace ember::gguf;
using ember::test::fixture_path;

namespace {

using ember::test::error_of;

File rich(const char* name = "rich.gguf") { return File::open(fixture_path("gguf/valid") / name); }

}  // namespace

TEST(GgufReader, ScalarsOfEveryType) {
    const File f = rich();
    EXPECT_EQ(f.version(), 3u);
    EXPECT_EQ(f.alignment(), 32u);
    EXPECT_EQ(f.get_string("general.architecture"), "llama");
    EXPECT_EQ(f.get_int("test.u8"), 200);
    EXPECT_EQ(f.get_int("test.i8"), -100);
    EXPECT_EQ(f.get_int("test.u16"), 60000);
    EXPECT_EQ(f.get_int("test.i16"), -30000);
    EXPECT_EQ(f.get_u32("test.u32"), 4000000000u);
    EXPECT_EQ(f.get_int("test.i32"), -2000000000);
    EXPECT_FLOAT_EQ(static_cast<float>(f.get_float("test.f32")), 0.1f);
    EXPECT_EQ(f.get_int("test.i64"), -9000000000000000000);
    EXPECT_DOUBLE_EQ(f.get_float("test.f64"), 2.718281828459045);
    EXPECT_TRUE(f.get_bool("test.true"));
    EXPECT_FALSE(f.get_bool("test.false"));
    EXPECT_EQ(f.get_string("test.unicode"), "naïve — 日本語 — 🙂 — مرحبا");
    EXPECT_EQ(f.get_string("test.multiline"), "{% for m in messages %}\n{{ m.content }}\n{% endfor %}");
    EXPECT_EQ(f.at("test.u8").type(), ValueType::U8);
    EXPECT_EQ(f.at("test.u64").type_name(), "u64");
}

TEST(GgufReader, TypedAccessorsExplainMismatches) {
    const File f = rich();
    const std::string name = f.name();
    EXPECT_EQ(error_of([&] { f.get_string("test.u32"); }), name + ": key 'test.u32' has type u32, expected string");
    EXPECT_EQ(error_of([&] { f.get_bool("test.string"); }), name + ": key 'test.string' has type string, expected bool");
    EXPECT_EQ(error_of([&] { f.get_int("test.array_i32"); }),
              name + ": key 'test.array_i32' has type array[i32], expected an integer");
    EXPECT_EQ(error_of([&] { f.get_u32("test.i8"); }), name + ": key 'test.i8' value -100 is outside the range of u32");
    EXPECT_EQ(error_of([&] { f.get_int("test.u64"); }), name + ": key 'test.u64' value 18000000000000000000 is too large");
    EXPECT_EQ(error_of([&] { f.get_string("no.such.key"); }), name + ": missing key 'no.such.key'");
    EXPECT_EQ(error_of([&] { f.get_float("test.array_f32"); }),
              name + ": key 'test.array_f32' has type array[f32], expected f32 or f64");
}

TEST(GgufReader, FallbacksOnlyForAbsentKeys) {
    const File f = rich();
    EXPECT_EQ(f.get_u32("absent", 7u), 7u);
    EXPECT_EQ(f.get_string("absent", "x"), "x");
    EXPECT_EQ(f.get_u32("test.u32", 7u), 4000000000u);
    EXPECT_THROW(f.get_u32("test.string", 7u), ember::Error);
}

TEST(GgufReader, ArraysOfEveryType) {
    const File f = rich();
    EXPECT_EQ(f.at("test.array_i32").int_array(), (std::vector<int64_t>{2, 11, 20, 29, 38}));
    EXPECT_EQ(f.at("test.array_u8").int_array(), (std::vector<int64_t>{0, 1, 2, 255}));
    EXPECT_EQ(f.at("test.array_i8").int_array(), (std::vector<int64_t>{-1, 2, -3}));
    EXPECT_EQ(f.at("test.array_i64").int_array(),
              (std::vector<int64_t>{INT64_MIN, INT64_MAX}));
    EXPECT_THROW(f.at("test.array_u64").int_array(), ember::Error);  // 2^64-1 does not fit
    EXPECT_EQ(f.at("test.array_f32").float_array(), (std::vector<float>{0.5f, -1.25f, 3.0e-8f, 1.0e30f}));
    EXPECT_EQ(f.at("test.array_bool").bool_array(), (std::vector<bool>{true, false, true}));
    const auto strings = f.at("test.array_string").strings();
    ASSERT_EQ(strings.size(), 5u);
    EXPECT_EQ(strings[0], "<unk>");
    EXPECT_EQ(strings[2], "");
    EXPECT_EQ(strings[3], "Ġthe");
    EXPECT_EQ(f.at("test.array_string").string_at(4), "日本");
    EXPECT_EQ(f.at("test.long_array").size(), 1000u);
    EXPECT_EQ(f.at("test.long_array").item(999).as_int(), 999);
    EXPECT_THROW(f.at("test.long_array").item(1000), ember::Error);
    EXPECT_THROW(f.at("test.array_i32").strings(), ember::Error);
}

TEST(GgufReader, NestedArrays) {
    const File f = rich();
    const Value& nested = f.at("test.nested");
    EXPECT_EQ(nested.type_name(), "array[array]");
    ASSERT_EQ(nested.size(), 3u);
    EXPECT_EQ(nested.item(0).int_array(), (std::vector<int64_t>{1, 2, 3}));
    EXPECT_EQ(nested.item(1).int_array(), (std::vector<int64_t>{4}));
    EXPECT_EQ(nested.item(2).int_array(), (std::vector<int64_t>{5, 6}));
    const Value& nested_strings = f.at("test.nested_strings");
    EXPECT_EQ(nested_strings.item(0).strings(), (std::vector<std::string_view>{"a", "b"}));
    EXPECT_EQ(nested_strings.item(1).string_at(0), "c");
}

TEST(GgufReader, TensorInfosAndDataViews) {
    const File f = rich();
    ASSERT_EQ(f.tensors().size(), 12u);
    const TensorInfo& t = f.tensor("f16_3d");
    EXPECT_EQ(t.type, TensorType::F16);
    EXPECT_EQ(t.n_dims, 3u);
    EXPECT_EQ(t.shape, (std::array<int64_t, 4>{32, 3, 2, 1}));
    EXPECT_EQ(t.n_bytes, 32u * 3 * 2 * 2);
    EXPECT_EQ(t.n_rows(), 6);
    const TensorInfo& q = f.tensor("q4_k_weight");
    EXPECT_EQ(q.type, TensorType::Q4_K);
    EXPECT_EQ(q.shape[0], 512);
    EXPECT_EQ(q.n_bytes, 4u * 2 * 144);
    for (const TensorInfo& info : f.tensors()) {
        const auto data = f.tensor_data(info);
        EXPECT_EQ(data.size(), info.n_bytes);
        EXPECT_EQ(info.offset % f.alignment(), 0u);
        EXPECT_LE(f.data_offset() + info.offset + info.n_bytes, f.size());
    }
    EXPECT_EQ(f.find_tensor("absent"), nullptr);
    EXPECT_EQ(error_of([&] { f.tensor("absent"); }), f.name() + ": missing tensor 'absent'");
}

TEST(GgufReader, DataIsAViewIntoTheMapping) {
    const File f = rich();
    const auto a = f.tensor_data(f.tensor("f32_1d"));
    const auto b = f.tensor_data(f.tensor("f32_1d"));
    EXPECT_EQ(a.data(), b.data());  // no copies
    float first;
    std::memcpy(&first, a.data(), 4);
    EXPECT_TRUE(std::isfinite(first));
}

TEST(GgufReader, VersionTwoAndCustomAlignment) {
    const File v2 = rich("rich_v2.gguf");
    EXPECT_EQ(v2.version(), 2u);
    EXPECT_EQ(v2.tensors().size(), 12u);
    const File a64 = rich("rich_align64.gguf");
    EXPECT_EQ(a64.alignment(), 64u);
    EXPECT_EQ(a64.data_offset() % 64, 0u);
    for (const TensorInfo& t : a64.tensors()) EXPECT_EQ(t.offset % 64, 0u);
}

TEST(GgufReader, MetadataOnlyFile) {
    const File f = rich("metadata_only.gguf");
    EXPECT_TRUE(f.tensors().empty());
    EXPECT_EQ(f.get_string("tokenizer.chat_template"), "{{ messages }}");
}

TEST(GgufReader, FileSystemErrorsAreOneLine) {
    EXPECT_EQ(error_of([] { File::open("/nonexistent/model.gguf"); }),
              "/nonexistent/model.gguf: cannot open: No such file or directory");
    EXPECT_EQ(error_of([] { File::open("/tmp"); }), "/tmp: cannot open: is a directory");
}
