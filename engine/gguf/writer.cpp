// SPDX-License-Identifier: MIT
// Writing GGUF files: header, metadata, tensor infos, aligned tensor data.
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "gguf/byte_reader.h"

namespace ember::gguf {

namespace {

constexpr uint32_t kMagic = 0x46554747;
constexpr uint32_t kVersion = 3;
constexpr uint32_t kDefaultAlignment = 32;

struct ByteSink {
    std::vector<std::byte>& out;
    void write(const void* p, size_t n) {
        const auto* b = static_cast<const std::byte*>(p);
        out.insert(out.end(), b, b + n);
    }
    uint64_t pos() const { return out.size(); }
};

struct FileSink {
    std::FILE* f;
    std::string name;
    uint64_t written = 0;
    void write(const void* p, size_t n) {
        if (n && std::fwrite(p, 1, n, f) != n) throw Error(name + ": write failed: " + std::strerror(errno));
        written += n;
    }
    uint64_t pos() const { return written; }
};

template <typename Sink, typename T>
void put(Sink& sink, T v) {
    sink.write(&v, sizeof v);
}

template <typename Sink>
void put_string(Sink& sink, std::string_view s) {
    put<Sink, uint64_t>(sink, s.size());
    sink.write(s.data(), s.size());
}

template <typename Sink>
void put_payload(Sink& sink, const OwnedValue& value) {
    std::visit(
        [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) {
                put_string(sink, v);
            } else if constexpr (std::is_same_v<T, std::shared_ptr<const ArrayValue>>) {
                put<Sink, uint32_t>(sink, static_cast<uint32_t>(v->element_type));
                put<Sink, uint64_t>(sink, v->items.size());
                for (const OwnedValue& item : v->items) put_payload(sink, item);
            } else if constexpr (std::is_same_v<T, bool>) {
                put<Sink, uint8_t>(sink, v ? 1 : 0);
            } else {
                put(sink, v);
            }
        },
        value);
}

template <typename Sink>
void pad_to(Sink& sink, uint32_t alignment) {
    static const std::byte zeros[256] = {};
    uint64_t pad = (alignment - sink.pos() % alignment) % alignment;
    while (pad > 0) {
        const size_t n = std::min<uint64_t>(pad, sizeof zeros);
        sink.write(zeros, n);
        pad -= n;
    }
}

uint64_t align_up(uint64_t v, uint32_t a) { return (v + a - 1) / a * a; }

void check_array(const std::string& key, const ArrayValue& array) {
    for (const OwnedValue& item : array.items) {
        if (type_of(item) != array.element_type)
            throw Error("key '" + key + "': array of " + std::string(value_type_name(array.element_type)) +
                        " holds a " + std::string(value_type_name(type_of(item))));
        if (const auto* inner = std::get_if<std::shared_ptr<const ArrayValue>>(&item)) check_array(key, **inner);
    }
}

}  // namespace

ValueType type_of(const OwnedValue& value) {
    // The variant's alternatives are in ValueType order, except that std::string sits at STRING and the array
    // pointer at ARRAY, so the index is the type id.
    return static_cast<ValueType>(value.index());
}

OwnedValue make_array(ValueType element_type, std::vector<OwnedValue> items) {
    auto array = std::make_shared<ArrayValue>();
    array->element_type = element_type;
    array->items = std::move(items);
    return std::shared_ptr<const ArrayValue>(std::move(array));
}

OwnedValue make_string_array(const std::vector<std::string>& items) {
    std::vector<OwnedValue> values(items.begin(), items.end());
    return make_array(ValueType::STRING, std::move(values));
}

OwnedValue to_owned(const Value& value) {
    const auto raw = value.raw();
    auto scalar = [&]<typename T>(T) -> OwnedValue {
        T v;
        std::memcpy(&v, raw.data(), sizeof v);
        return v;
    };
    switch (value.type()) {
        case ValueType::U8: return scalar(uint8_t{});
        case ValueType::I8: return scalar(int8_t{});
        case ValueType::U16: return scalar(uint16_t{});
        case ValueType::I16: return scalar(int16_t{});
        case ValueType::U32: return scalar(uint32_t{});
        case ValueType::I32: return scalar(int32_t{});
        case ValueType::F32: return scalar(float{});
        case ValueType::BOOL: return value.as_bool();
        case ValueType::STRING: return std::string(value.as_string());
        case ValueType::U64: return scalar(uint64_t{});
        case ValueType::I64: return scalar(int64_t{});
        case ValueType::F64: return scalar(double{});
        case ValueType::ARRAY: {
            std::vector<OwnedValue> items;
            items.reserve(value.size());
            for (uint64_t i = 0; i < value.size(); ++i) items.push_back(to_owned(value.item(i)));
            return make_array(value.element_type(), std::move(items));
        }
    }
    throw Error("invalid value type");
}

Writer::Writer(uint32_t alignment) : alignment_(alignment) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
        throw Error("GGUF alignment " + std::to_string(alignment) + " is not a power of two");
}

void Writer::set(std::string key, OwnedValue value) {
    if (key.empty()) throw Error("metadata keys must not be empty");
    if (key == "general.alignment") {
        const auto* a = std::get_if<uint32_t>(&value);
        if (!a || *a != alignment_)
            throw Error("general.alignment must be the u32 " + std::to_string(alignment_) +
                        " given to the writer");
    }
    if (const auto* array = std::get_if<std::shared_ptr<const ArrayValue>>(&value)) check_array(key, **array);
    for (auto& [k, v] : metadata_)
        if (k == key) {
            v = std::move(value);
            return;
        }
    metadata_.emplace_back(std::move(key), std::move(value));
}

void Writer::remove(std::string_view key) {
    std::erase_if(metadata_, [&](const auto& kv) { return kv.first == key; });
}

bool Writer::has(std::string_view key) const {
    for (const auto& kv : metadata_)
        if (kv.first == key) return true;
    return false;
}

void Writer::add_tensor(std::string name, TensorType type, std::span<const int64_t> shape,
                        std::span<const std::byte> data) {
    add_tensor(std::move(name), type, shape, Producer{});
    PendingTensor& t = tensors_.back();
    if (data.size() != t.n_bytes)
        throw Error("tensor '" + t.name + "': " + std::to_string(data.size()) + " bytes given, " +
                    std::to_string(t.n_bytes) + " expected");
    t.data = data;
}

void Writer::add_tensor(std::string name, TensorType type, std::span<const int64_t> shape, Producer producer) {
    if (name.empty()) throw Error("tensor names must not be empty");
    for (const PendingTensor& t : tensors_)
        if (t.name == name) throw Error("duplicate tensor '" + name + "'");
    if (shape.empty() || shape.size() > static_cast<size_t>(max_dims))
        throw Error("tensor '" + name + "' has " + std::to_string(shape.size()) + " dimensions (must be 1 to 4)");
    int64_t n = 1;
    for (int64_t d : shape) {
        if (d < 0) throw Error("tensor '" + name + "' has a negative dimension");
        n *= d;
    }
    uint64_t n_bytes = 0;
    try {
        n_bytes = row_bytes(type, shape[0]) * static_cast<uint64_t>(shape[0] ? n / shape[0] : 0);
    } catch (const Error& e) {
        throw Error("tensor '" + name + "': " + e.what());
    }
    tensors_.push_back({std::move(name), type, {shape.begin(), shape.end()}, n_bytes, {}, std::move(producer)});
}

template <typename Sink>
void Writer::emit(Sink& sink) const {
    put<Sink, uint32_t>(sink, kMagic);
    put<Sink, uint32_t>(sink, kVersion);
    put<Sink, uint64_t>(sink, tensors_.size());
    // A reader assumes 32 unless general.alignment says otherwise; the key is added at the end when the caller
    // did not place it.
    const bool add_alignment_key = alignment_ != kDefaultAlignment && !has("general.alignment");
    put<Sink, uint64_t>(sink, metadata_.size() + (add_alignment_key ? 1 : 0));
    auto put_kv = [&](std::string_view key, const OwnedValue& value) {
        put_string(sink, key);
        put<Sink, uint32_t>(sink, static_cast<uint32_t>(type_of(value)));
        put_payload(sink, value);
    };
    for (const auto& [key, value] : metadata_) put_kv(key, value);
    if (add_alignment_key) put_kv("general.alignment", OwnedValue{alignment_});
    uint64_t offset = 0;
    for (const PendingTensor& t : tensors_) {
        put_string(sink, t.name);
        put<Sink, uint32_t>(sink, static_cast<uint32_t>(t.shape.size()));
        for (int64_t d : t.shape) put<Sink, uint64_t>(sink, static_cast<uint64_t>(d));
        put<Sink, uint32_t>(sink, static_cast<uint32_t>(t.type));
        put<Sink, uint64_t>(sink, offset);
        offset = align_up(offset + t.n_bytes, alignment_);
    }
    pad_to(sink, alignment_);
    std::vector<std::byte> scratch;
    for (const PendingTensor& t : tensors_) {
        if (t.producer) {
            scratch.assign(t.n_bytes, std::byte{0});
            t.producer(scratch);
            sink.write(scratch.data(), scratch.size());
        } else {
            sink.write(t.data.data(), t.data.size());
        }
        pad_to(sink, alignment_);
    }
}

std::vector<std::byte> Writer::to_bytes() const {
    std::vector<std::byte> out;
    ByteSink sink{out};
    emit(sink);
    return out;
}

void Writer::write(const std::filesystem::path& path) const {
    const std::filesystem::path tmp = path.string() + ".partial";
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw Error(path.string() + ": cannot create: " + std::strerror(errno));
    try {
        FileSink sink{f, path.string()};
        emit(sink);
        if (std::fflush(f) != 0 || ::fsync(::fileno(f)) != 0)
            throw Error(path.string() + ": write failed: " + std::strerror(errno));
    } catch (...) {
        std::fclose(f);
        std::filesystem::remove(tmp);
        throw;
    }
    if (std::fclose(f) != 0) {
        std::filesystem::remove(tmp);
        throw Error(path.string() + ": write failed: " + std::strerror(errno));
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp);
        throw Error(path.string() + ": cannot rename into place: " + ec.message());
    }
}

}  // namespace ember::gguf
