// SPDX-License-Identifier: MIT
// Parses and validates a whole GGUF container (versions 2 and 3) on open. Layout: magic "GGUF", u32 version,
// u64 tensor count, u64 key count, the key/value pairs, the tensor infos, padding to general.alignment, then the
// data section. All multi-byte values are little-endian.
#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

#include "gguf/byte_reader.h"
#include "gguf/mapped_file.h"

namespace ember::gguf {

namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as little-endian u32
constexpr uint32_t kDefaultAlignment = 32;
constexpr uint64_t kMinKeyValueBytes = 8 + 1 + 4 + 1;          // key length, 1-byte key, type, u8 value
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;  // name length, name, n_dims, 1 dim, type, offset

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

struct File::Impl {
    std::string name;
    std::unique_ptr<MappedFile> mapping;  // null for from_memory
    std::span<const std::byte> bytes;
    uint32_t version = 0;
    uint32_t alignment = kDefaultAlignment;
    uint64_t data_offset = 0;
    std::vector<KeyValue> metadata;
    std::unordered_map<std::string_view, size_t> key_index;
    std::vector<TensorInfo> tensors;
    std::unordered_map<std::string_view, size_t> tensor_index;

    void parse();
    void parse_header(ByteReader& r, uint64_t& n_tensors, uint64_t& n_kv);
    void parse_metadata(ByteReader& r, uint64_t n_kv);
    void parse_tensor_infos(ByteReader& r, uint64_t n_tensors, std::vector<uint64_t>& info_offsets);
    void check_tensor_placement(const ByteReader& r, const std::vector<uint64_t>& info_offsets);
};

void File::Impl::parse_header(ByteReader& r, uint64_t& n_tensors, uint64_t& n_kv) {
    if (r.size() < 4) r.fail("file is too small to be a GGUF file (" + std::to_string(r.size()) + " bytes)");
    const uint32_t magic = r.read<uint32_t>("magic");
    if (magic != kMagic) {
        char shown[5] = {};
        std::memcpy(shown, &magic, 4);
        for (char& c : shown)
            if (c && (c < 32 || c > 126)) c = '?';
        r.fail_at(0, "bad magic '" + std::string(shown, 4) + "' (expected 'GGUF'): not a GGUF file");
    }
    version = r.read<uint32_t>("version");
    if (version == 0x03000000 || version == 0x02000000)
        r.fail_at(4, "big-endian GGUF files are not supported");
    if (version == 1) r.fail_at(4, "GGUF version 1 is not supported (32-bit counts); convert the file again");
    if (version != 2 && version != 3)
        r.fail_at(4, "unsupported GGUF version " + std::to_string(version) + " (supported: 2, 3)");
    n_tensors = r.read<uint64_t>("tensor count");
    n_kv = r.read<uint64_t>("metadata key count");
    if (n_kv > r.remaining() / kMinKeyValueBytes)
        r.fail_at(16, "metadata key count " + std::to_string(n_kv) + " cannot fit in a file of " +
                          std::to_string(r.size()) + " bytes");
    if (n_tensors > r.remaining() / kMinTensorInfoBytes)
        r.fail_at(8, "tensor count " + std::to_string(n_tensors) + " cannot fit in a file of " +
                         std::to_string(r.size()) + " bytes");
}

void File::Impl::parse_metadata(ByteReader& r, uint64_t n_kv) {
    metadata.reserve(n_kv);
    Parser parser(r);
    for (uint64_t i = 0; i < n_kv; ++i) {
        const uint64_t start = r.pos();
        const std::string_view key = r.read_string("key of metadata entry " + std::to_string(i));
        if (key.empty()) r.fail_at(start, "metadata entry " + std::to_string(i) + " has an empty key");
        const std::string what = "key " + quoted(key);
        if (key_index.count(key)) r.fail_at(start, "duplicate metadata " + what);
        const uint64_t type_pos = r.pos();
        const uint32_t type_id = r.read<uint32_t>(what + " value type");
        if (!valid_value_type(type_id))
            r.fail_at(type_pos, what + ": unknown value type " + std::to_string(type_id));
        Value value = parser.parse(static_cast<ValueType>(type_id), what, 0, true);
        key_index.emplace(key, metadata.size());
        metadata.push_back({key, std::move(value)});
    }

    if (auto it = key_index.find("general.alignment"); it != key_index.end()) {
        const Value& v = metadata[it->second].value;
        const uint64_t at = static_cast<uint64_t>(v.raw().data() - bytes.data());
        if (v.type() != ValueType::U32)
            r.fail_at(at, "key 'general.alignment' has type " + v.type_name() + ", expected u32");
        alignment = v.as_u32();
        if (alignment == 0 || (alignment & (alignment - 1)) != 0)
            r.fail_at(at, "key 'general.alignment' is " + std::to_string(alignment) + ", not a power of two");
    }
}

void File::Impl::parse_tensor_infos(ByteReader& r, uint64_t n_tensors, std::vector<uint64_t>& info_offsets) {
    tensors.reserve(n_tensors);
    info_offsets.reserve(n_tensors);
    for (uint64_t i = 0; i < n_tensors; ++i) {
        const uint64_t start = r.pos();
        const std::string_view tname = r.read_string("name of tensor " + std::to_string(i));
        if (tname.empty()) r.fail_at(start, "tensor " + std::to_string(i) + " has an empty name");
        const std::string what = "tensor " + quoted(tname);
        if (auto it = tensor_index.find(tname); it != tensor_index.end())
            r.fail_at(start, "duplicate " + what + " (tensors " + std::to_string(it->second) + " and " +
                                 std::to_string(i) + ")");

        TensorInfo t{};
        t.name = tname;
        const uint64_t dims_pos = r.pos();
        t.n_dims = r.read<uint32_t>(what + " dimension count");
        if (t.n_dims == 0 || t.n_dims > static_cast<uint32_t>(max_dims))
            r.fail_at(dims_pos, what + " has " + std::to_string(t.n_dims) + " dimensions (must be 1 to " +
                                    std::to_string(max_dims) + ")");
        t.shape.fill(1);
        int64_t n_elements = 1;
        for (uint32_t d = 0; d < t.n_dims; ++d) {
            const uint64_t dim_pos = r.pos();
            const uint64_t dim = r.read<uint64_t>(what + " shape");
            if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
                r.fail_at(dim_pos, what + ": dimension " + std::to_string(d) + " is negative or too large (" +
                                       std::to_string(dim) + ")");
            t.shape[d] = static_cast<int64_t>(dim);
            if (t.shape[d] != 0 && n_elements > std::numeric_limits<int64_t>::max() / t.shape[d])
                r.fail_at(dims_pos, what + ": element count overflows 64 bits");
            n_elements *= t.shape[d];
        }
        const uint64_t type_pos = r.pos();
        const uint32_t type_id = r.read<uint32_t>(what + " type");
        const TypeTraits* traits = find_type(type_id);
        if (!traits)
            r.fail_at(type_pos, what + " has unknown type id " + std::to_string(type_id) +
                                    " (known: " + known_type_list() + ")");
        t.type = traits->type;
        if (t.shape[0] % traits->block_size != 0)
            r.fail_at(dims_pos, what + " (" + std::string(traits->name) + "): row length " +
                                    std::to_string(t.shape[0]) + " is not a multiple of the block size " +
                                    std::to_string(traits->block_size));
        const uint64_t blocks = static_cast<uint64_t>(n_elements) / traits->block_size;
        if (blocks > std::numeric_limits<uint64_t>::max() / traits->block_bytes)
            r.fail_at(dims_pos, what + ": byte size overflows 64 bits");
        t.n_bytes = blocks * traits->block_bytes;
        info_offsets.push_back(r.pos());
        t.offset = r.read<uint64_t>(what + " data offset");

        tensor_index.emplace(tname, tensors.size());
        tensors.push_back(t);
    }
}

void File::Impl::check_tensor_placement(const ByteReader& r, const std::vector<uint64_t>& info_offsets) {
    const uint64_t file_size = bytes.size();
    for (size_t i = 0; i < tensors.size(); ++i) {
        const TensorInfo& t = tensors[i];
        const std::string what = "tensor " + quoted(t.name);
        if (t.offset % alignment != 0)
            r.fail_at(info_offsets[i], what + ": data offset " + std::to_string(t.offset) +
                                           " is not a multiple of the alignment " + std::to_string(alignment));
        const uint64_t room = file_size - data_offset;
        if (t.offset > room || t.n_bytes > room - t.offset)
            r.fail_at(info_offsets[i], what + ": data [" + std::to_string(t.offset) + ", +" +
                                           std::to_string(t.n_bytes) + " bytes) extends past the end of the file (" +
                                           std::to_string(room) + " data bytes)");
    }
    std::vector<size_t> order(tensors.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return tensors[a].offset < tensors[b].offset; });
    for (size_t k = 1; k < order.size(); ++k) {
        const TensorInfo& prev = tensors[order[k - 1]];
        const TensorInfo& next = tensors[order[k]];
        if (prev.n_bytes > 0 && next.n_bytes > 0 && prev.offset + prev.n_bytes > next.offset)
            r.fail_at(info_offsets[order[k]], "tensor " + quoted(next.name) + " overlaps the data of tensor " +
                                                  quoted(prev.name));
    }
}

void File::Impl::parse() {
    ByteReader r(bytes, name);
    uint64_t n_tensors = 0;
    uint64_t n_kv = 0;
    parse_header(r, n_tensors, n_kv);
    parse_metadata(r, n_kv);
    std::vector<uint64_t> info_offsets;
    parse_tensor_infos(r, n_tensors, info_offsets);
    const uint64_t end_of_infos = r.pos();
    data_offset = (end_of_infos + alignment - 1) / alignment * alignment;
    if (data_offset > bytes.size()) {
        if (!tensors.empty())
            r.fail_at(end_of_infos, "data section starts at " + std::to_string(data_offset) +
                                        ", past the end of the file");
        data_offset = bytes.size();
    }
    check_tensor_placement(r, info_offsets);
}

File::File(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;

File File::open(const std::filesystem::path& path) {
    auto impl = std::make_unique<Impl>();
    impl->name = path.string();
    impl->mapping = std::make_unique<MappedFile>(path);
    impl->bytes = impl->mapping->bytes();
    impl->parse();
    return File(std::move(impl));
}

File File::from_memory(std::span<const std::byte> bytes, std::string name) {
    auto impl = std::make_unique<Impl>();
    impl->name = std::move(name);
    impl->bytes = bytes;
    impl->parse();
    return File(std::move(impl));
}

const std::string& File::name() const { return impl_->name; }
uint32_t File::version() const { return impl_->version; }
uint32_t File::alignment() const { return impl_->alignment; }
uint64_t File::size() const { return impl_->bytes.size(); }
uint64_t File::data_offset() const { return impl_->data_offset; }
std::span<const KeyValue> File::metadata() const { return impl_->metadata; }
std::span<const TensorInfo> File::tensors() const { return impl_->tensors; }

const Value* File::find(std::string_view key) const {
    const auto it = impl_->key_index.find(key);
    return it == impl_->key_index.end() ? nullptr : &impl_->metadata[it->second].value;
}

const Value& File::at(std::string_view key) const {
    const Value* v = find(key);
    if (!v) throw Error(impl_->name + ": missing key " + quoted(key));
    return *v;
}

namespace {

// Runs a Value accessor on a present key and prefixes its error with the file and key.
template <typename F>
auto typed(const File& file, std::string_view key, F&& f) -> decltype(f(file.at(key))) {
    const Value& v = file.at(key);
    try {
        return f(v);
    } catch (const Error& e) {
        throw Error(file.name() + ": key " + quoted(key) + " " + e.what());
    }
}

}  // namespace

std::string_view File::get_string(std::string_view key) const {
    return typed(*this, key, [](const Value& v) { return v.as_string(); });
}
int64_t File::get_int(std::string_view key) const {
    return typed(*this, key, [](const Value& v) { return v.as_int(); });
}
uint32_t File::get_u32(std::string_view key) const {
    return typed(*this, key, [](const Value& v) { return v.as_u32(); });
}
double File::get_float(std::string_view key) const {
    return typed(*this, key, [](const Value& v) { return v.as_float(); });
}
bool File::get_bool(std::string_view key) const {
    return typed(*this, key, [](const Value& v) { return v.as_bool(); });
}
std::string_view File::get_string(std::string_view key, std::string_view fallback) const {
    return has(key) ? get_string(key) : fallback;
}
int64_t File::get_int(std::string_view key, int64_t fallback) const { return has(key) ? get_int(key) : fallback; }
uint32_t File::get_u32(std::string_view key, uint32_t fallback) const { return has(key) ? get_u32(key) : fallback; }
double File::get_float(std::string_view key, double fallback) const { return has(key) ? get_float(key) : fallback; }
bool File::get_bool(std::string_view key, bool fallback) const { return has(key) ? get_bool(key) : fallback; }

const TensorInfo* File::find_tensor(std::string_view name) const {
    const auto it = impl_->tensor_index.find(name);
    return it == impl_->tensor_index.end() ? nullptr : &impl_->tensors[it->second];
}

const TensorInfo& File::tensor(std::string_view name) const {
    const TensorInfo* t = find_tensor(name);
    if (!t) throw Error(impl_->name + ": missing tensor " + quoted(name));
    return *t;
}

std::span<const std::byte> File::tensor_data(const TensorInfo& info) const {
    return impl_->bytes.subspan(impl_->data_offset + info.offset, info.n_bytes);
}

}  // namespace ember::gguf
