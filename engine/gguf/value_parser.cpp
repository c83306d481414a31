// SPDX-License-Identifier: MIT
// Parsing GGUF metadata values from the file's bytes, bounded in depth and size.
#include "gguf/byte_reader.h"

namespace ember::gguf {

std::string_view ByteReader::read_string(std::string_view what) {
    const uint64_t start = pos_;
    const uint64_t len = read<uint64_t>(what);
    if (len > remaining())
        fail_at(start, std::string(what) + ": string length " + std::to_string(len) + " exceeds the " +
                           std::to_string(remaining()) + " bytes left in the file");
    std::string_view s(reinterpret_cast<const char*>(here()), static_cast<size_t>(len));
    pos_ += len;
    return s;
}

void ByteReader::fail_at(uint64_t pos, const std::string& problem) const {
    throw Error(name_ + ": offset " + std::to_string(pos) + ": " + problem);
}

void ByteReader::truncated(uint64_t n, std::string_view what) const {
    fail("file ends inside " + std::string(what) + " (needs " + std::to_string(n) + " bytes, " +
         std::to_string(remaining()) + " left)");
}

Value Parser::parse(ValueType type, const std::string& what, int depth, bool build_index) {
    Value v;
    v.type_ = type;
    v.elem_ = type;
    const uint64_t start = r_.pos();
    if (type == ValueType::STRING) {
        const std::string_view s = r_.read_string(what);
        v.data_ = reinterpret_cast<const std::byte*>(s.data());
        v.count_ = s.size();
        v.span_ = s.size();
        return v;
    }
    if (type != ValueType::ARRAY) {
        const uint64_t n = scalar_size(type);
        v.data_ = r_.here();
        v.span_ = n;
        r_.skip(n, what);
        if (type == ValueType::BOOL && static_cast<uint8_t>(*v.data_) > 1)
            r_.fail_at(start, what + ": bool byte " + std::to_string(static_cast<unsigned>(*v.data_)) +
                                  " is neither 0 nor 1");
        return v;
    }

    if (depth >= max_depth)
        r_.fail_at(start, what + ": arrays nested deeper than " + std::to_string(max_depth) + " levels");
    const uint32_t elem_id = r_.read<uint32_t>(what + " element type");
    if (!valid_value_type(elem_id))
        r_.fail_at(start, what + ": unknown array element type " + std::to_string(elem_id));
    const auto elem = static_cast<ValueType>(elem_id);
    const uint64_t count = r_.read<uint64_t>(what + " element count");
    // Smallest encoding of one element: its scalar size, a string's length field, or a nested array's header.
    const uint64_t min_elem = elem == ValueType::STRING ? 8 : elem == ValueType::ARRAY ? 12 : scalar_size(elem);
    if (count > r_.remaining() / min_elem)
        r_.fail_at(start, what + ": array of " + std::to_string(count) + " " + std::string(value_type_name(elem)) +
                              " elements cannot fit in the " + std::to_string(r_.remaining()) +
                              " bytes left in the file");
    v.elem_ = elem;
    v.count_ = count;
    v.data_ = r_.here();
    const uint64_t body = r_.pos();

    if (elem != ValueType::STRING && elem != ValueType::ARRAY) {
        r_.skip(count * min_elem, what);
        if (elem == ValueType::BOOL)
            for (uint64_t i = 0; i < count; ++i)
                if (static_cast<uint8_t>(v.data_[i]) > 1)
                    r_.fail_at(body + i, what + ": element " + std::to_string(i) + ": bool byte " +
                                             std::to_string(static_cast<unsigned>(v.data_[i])) + " is neither 0 nor 1");
    } else {
        std::shared_ptr<std::vector<uint64_t>> index;
        if (build_index) {
            index = std::make_shared<std::vector<uint64_t>>();
            index->reserve(count);  // count <= remaining / 8, so this never exceeds the file size
        }
        for (uint64_t i = 0; i < count; ++i) {
            if (index) index->push_back(r_.pos() - body);
            parse(elem, what + "[" + std::to_string(i) + "]", depth + 1, false);
        }
        v.index_ = std::move(index);
    }
    v.span_ = r_.pos() - body;
    return v;
}

Value Parser::element(const Value& array, uint64_t i) {
    const ValueType elem = array.elem_;
    if (elem != ValueType::STRING && elem != ValueType::ARRAY) {
        Value v;
        v.type_ = v.elem_ = elem;
        v.span_ = scalar_size(elem);
        v.data_ = array.data_ + i * v.span_;
        return v;
    }
    // Top-level arrays and the arrays element() returns are parsed with build_index, so the index exists.
    const uint64_t offset = (*array.index_)[i];
    static const std::string inner = "<array element>";
    const std::span<const std::byte> rest(array.data_ + offset, static_cast<size_t>(array.span_ - offset));
    ByteReader reader(rest, inner);
    Parser p(reader);
    return p.parse(elem, inner, 1, true);
}

}  // namespace ember::gguf
