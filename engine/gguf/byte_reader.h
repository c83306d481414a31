// SPDX-License-Identifier: MIT
// Bounds-checked little-endian reading of a GGUF buffer, and the parser that turns encoded metadata into Values.
// Every failure names the file and the byte offset where the problem is.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "ember/gguf.h"

namespace ember::gguf {

class ByteReader {
public:
    ByteReader(std::span<const std::byte> bytes, const std::string& name, uint64_t pos = 0)
        : bytes_(bytes), name_(name), pos_(pos) {}

    uint64_t pos() const { return pos_; }
    uint64_t size() const { return bytes_.size(); }
    uint64_t remaining() const { return bytes_.size() - pos_; }
    const std::byte* here() const { return bytes_.data() + pos_; }
    const std::string& name() const { return name_; }

    template <typename T>
    T read(std::string_view what) {
        need(sizeof(T), what);
        T value;
        std::memcpy(&value, here(), sizeof(T));
        pos_ += sizeof(T);
        return value;
    }

    // A u64 length followed by that many bytes.
    std::string_view read_string(std::string_view what);
    void skip(uint64_t n, std::string_view what) {
        need(n, what);
        pos_ += n;
    }

    [[noreturn]] void fail(const std::string& problem) const { fail_at(pos_, problem); }
    [[noreturn]] void fail_at(uint64_t pos, const std::string& problem) const;

private:
    void need(uint64_t n, std::string_view what) const {
        if (n > remaining()) truncated(n, what);
    }
    [[noreturn]] void truncated(uint64_t n, std::string_view what) const;

    std::span<const std::byte> bytes_;
    const std::string& name_;
    uint64_t pos_;
};

// Reads metadata values. With build_index, string and nested arrays get an element index so that Value::item()
// is O(1); without it, the value is only validated (used for arrays inside arrays).
class Parser {
public:
    static constexpr int max_depth = 8;

    explicit Parser(ByteReader& reader) : r_(reader) {}

    // Reads a value of `type` at the cursor. `what` names it in errors ("key 'x'").
    Value parse(ValueType type, const std::string& what, int depth, bool build_index);

    // Element i of an array value whose encoding is already validated.
    static Value element(const Value& array, uint64_t i);

private:
    ByteReader& r_;
};

bool valid_value_type(uint32_t id);
uint64_t scalar_size(ValueType type);  // 0 for string and array

}  // namespace ember::gguf
