// SPDX-License-Identifier: MIT
// GGUF metadata values: type names, scalar sizes, typed access and its errors.
#include <limits>

#include "gguf/byte_reader.h"

namespace ember::gguf {

namespace {

template <typename T>
T load(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

}  // namespace

std::string_view value_type_name(ValueType type) {
    switch (type) {
        case ValueType::U8: return "u8";
        case ValueType::I8: return "i8";
        case ValueType::U16: return "u16";
        case ValueType::I16: return "i16";
        case ValueType::U32: return "u32";
        case ValueType::I32: return "i32";
        case ValueType::F32: return "f32";
        case ValueType::BOOL: return "bool";
        case ValueType::STRING: return "string";
        case ValueType::ARRAY: return "array";
        case ValueType::U64: return "u64";
        case ValueType::I64: return "i64";
        case ValueType::F64: return "f64";
    }
    return "invalid";
}

bool valid_value_type(uint32_t id) { return id <= static_cast<uint32_t>(ValueType::F64); }

uint64_t scalar_size(ValueType type) {
    switch (type) {
        case ValueType::U8: case ValueType::I8: case ValueType::BOOL: return 1;
        case ValueType::U16: case ValueType::I16: return 2;
        case ValueType::U32: case ValueType::I32: case ValueType::F32: return 4;
        case ValueType::U64: case ValueType::I64: case ValueType::F64: return 8;
        case ValueType::STRING: case ValueType::ARRAY: return 0;
    }
    return 0;
}

std::string Value::type_name() const {
    if (type_ != ValueType::ARRAY) return std::string(value_type_name(type_));
    return "array[" + std::string(value_type_name(elem_)) + "]";
}

void Value::type_error(std::string_view expected) const {
    throw Error("has type " + type_name() + ", expected " + std::string(expected));
}

bool Value::is_integer() const {
    switch (type_) {
        case ValueType::U8: case ValueType::I8: case ValueType::U16: case ValueType::I16:
        case ValueType::U32: case ValueType::I32: case ValueType::U64: case ValueType::I64: return true;
        default: return false;
    }
}

bool Value::is_float() const { return type_ == ValueType::F32 || type_ == ValueType::F64; }

bool Value::as_bool() const {
    if (type_ != ValueType::BOOL) type_error("bool");
    return load<uint8_t>(data_) != 0;
}

std::string_view Value::as_string() const {
    if (type_ != ValueType::STRING) type_error("string");
    return {reinterpret_cast<const char*>(data_), static_cast<size_t>(count_)};
}

int64_t Value::as_int() const {
    switch (type_) {
        case ValueType::U8: return load<uint8_t>(data_);
        case ValueType::I8: return load<int8_t>(data_);
        case ValueType::U16: return load<uint16_t>(data_);
        case ValueType::I16: return load<int16_t>(data_);
        case ValueType::U32: return load<uint32_t>(data_);
        case ValueType::I32: return load<int32_t>(data_);
        case ValueType::I64: return load<int64_t>(data_);
        case ValueType::U64: {
            const uint64_t v = load<uint64_t>(data_);
            if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
                throw Error("value " + std::to_string(v) + " is too large");
            return static_cast<int64_t>(v);
        }
        default: type_error("an integer");
    }
}

uint32_t Value::as_u32() const {
    const int64_t v = as_int();
    if (v < 0 || v > std::numeric_limits<uint32_t>::max())
        throw Error("value " + std::to_string(v) + " is outside the range of u32");
    return static_cast<uint32_t>(v);
}

double Value::as_float() const {
    if (type_ == ValueType::F32) return load<float>(data_);
    if (type_ == ValueType::F64) return load<double>(data_);
    type_error("f32 or f64");
}

uint64_t Value::size() const { return type_ == ValueType::ARRAY ? count_ : 0; }

Value Value::item(uint64_t i) const {
    if (type_ != ValueType::ARRAY) type_error("array");
    if (i >= count_) throw Error("array index " + std::to_string(i) + " is out of range (size " +
                                 std::to_string(count_) + ")");
    return Parser::element(*this, i);
}

std::string_view Value::string_at(uint64_t i) const {
    if (type_ != ValueType::ARRAY || elem_ != ValueType::STRING) type_error("array[string]");
    return item(i).as_string();
}

std::vector<std::string_view> Value::strings() const {
    if (type_ != ValueType::ARRAY || elem_ != ValueType::STRING) type_error("array[string]");
    std::vector<std::string_view> out;
    out.reserve(count_);
    for (uint64_t i = 0; i < count_; ++i) out.push_back(Parser::element(*this, i).as_string());
    return out;
}

std::vector<int64_t> Value::int_array() const {
    if (type_ != ValueType::ARRAY) type_error("array of integers");
    Value first;
    first.type_ = elem_;
    if (!first.is_integer()) type_error("array of integers");
    std::vector<int64_t> out;
    out.reserve(count_);
    for (uint64_t i = 0; i < count_; ++i) out.push_back(Parser::element(*this, i).as_int());
    return out;
}

std::vector<float> Value::float_array() const {
    if (type_ != ValueType::ARRAY || (elem_ != ValueType::F32 && elem_ != ValueType::F64))
        type_error("array[f32]");
    std::vector<float> out(count_);
    for (uint64_t i = 0; i < count_; ++i)
        out[i] = elem_ == ValueType::F32 ? load<float>(data_ + 4 * i) : static_cast<float>(load<double>(data_ + 8 * i));
    return out;
}

std::vector<bool> Value::bool_array() const {
    if (type_ != ValueType::ARRAY || elem_ != ValueType::BOOL) type_error("array[bool]");
    std::vector<bool> out(count_);
    for (uint64_t i = 0; i < count_; ++i) out[i] = load<uint8_t>(data_ + i) != 0;
    return out;
}

std::span<const std::byte> Value::raw() const { return {data_, static_cast<size_t>(span_)}; }

}  // namespace ember::gguf
