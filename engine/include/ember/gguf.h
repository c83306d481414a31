// SPDX-License-Identifier: MIT
// GGUF files: a memory-mapped reader that validates the whole container on open, a writer for tools and tests,
// and the registry of every tensor type Ember knows.
//
// The reader never copies tensor data: tensors are views into the mapping, which lives as long as the File.
// Every problem in a file is reported as an ember::Error with one line naming the file, the byte offset and the
// problem. No input may crash the reader, make it hang, or make it allocate more than the size of the file.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ember/error.h"

namespace ember::gguf {

// ---------------------------------------------------------------------------------------------------------------
// Tensor types

// Type ids as stored in GGUF tensor infos (ggml's numbering, plus the ROCmFP4/ROCmFPX family at 100-104).
enum class TensorType : uint32_t {
    F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
    Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
    IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22, IQ4_XS = 23,
    I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30, TQ1_0 = 34, TQ2_0 = 35,
    MXFP4 = 39, NVFP4 = 40, Q1_0 = 41,
    Q4_0_ROCMFP4 = 100, Q4_0_ROCMFP4_FAST = 101, Q6_0_ROCMFPX = 102, Q8_0_ROCMFPX = 103, Q3_0_ROCMFPX = 104,
};

struct TypeTraits {
    TensorType type;
    std::string_view name;     // lower-case name as llama.cpp prints it, e.g. "q4_0_rocmfp4"
    uint32_t block_size;       // weights per block
    uint32_t block_bytes;      // bytes per block
    bool quantized;            // block_size > 1 or a non-float element type
};

// All known types in id order.
std::span<const TypeTraits> known_types();
// nullptr for an id Ember does not know.
const TypeTraits* find_type(uint32_t id);
const TypeTraits& traits(TensorType type);
// Case-insensitive lookup by name ("Q8_0", "q4_0_rocmfp4").
std::optional<TensorType> type_from_name(std::string_view name);
// "f32 (0), f16 (1), ..." for error messages.
std::string known_type_list();
// Bytes of a row of n weights; throws when n is not a multiple of the block size.
uint64_t row_bytes(TensorType type, int64_t n);

// ---------------------------------------------------------------------------------------------------------------
// Metadata values

enum class ValueType : uint32_t {
    U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, BOOL = 7, STRING = 8, ARRAY = 9,
    U64 = 10, I64 = 11, F64 = 12,
};

std::string_view value_type_name(ValueType type);  // "u32", "string", "array", ...

// A metadata value as a view into the file's mapping. Cheap to copy; valid while its File lives.
class Value {
public:
    ValueType type() const { return type_; }
    // For arrays: the element type. For other values: the value's own type.
    ValueType element_type() const { return elem_; }
    // "u32", "string", "array[string]", "array[array]".
    std::string type_name() const;

    bool is_integer() const;
    bool is_float() const;

    // Exact-type access; throw ember::Error("has type u32, expected string") on a mismatch.
    bool as_bool() const;
    std::string_view as_string() const;
    // Any integer type, range-checked into int64_t (a u64 above INT64_MAX is an error).
    int64_t as_int() const;
    // Any integer type that fits into uint32_t.
    uint32_t as_u32() const;
    // f32 or f64.
    double as_float() const;

    // Arrays.
    uint64_t size() const;                   // element count (0 for non-arrays)
    std::string_view string_at(uint64_t i) const;  // array[string]
    Value item(uint64_t i) const;            // any array: element i as a Value
    std::vector<std::string_view> strings() const;  // array[string]
    std::vector<int64_t> int_array() const;  // array of any integer type
    std::vector<float> float_array() const;  // array[f32] or array[f64]
    std::vector<bool> bool_array() const;    // array[bool]

    // Scalars and scalar arrays: the raw little-endian bytes in the file.
    std::span<const std::byte> raw() const;

private:
    friend class Parser;
    ValueType type_ = ValueType::U8;
    ValueType elem_ = ValueType::U8;
    uint64_t count_ = 0;                // arrays: element count; strings: byte length
    const std::byte* data_ = nullptr;   // scalar bytes, string chars, or first array element
    uint64_t span_ = 0;                 // bytes of the encoded payload starting at data_
    // Offsets (relative to data_) of the elements of string and nested arrays; scalar arrays are indexed directly.
    std::shared_ptr<const std::vector<uint64_t>> index_;

    [[noreturn]] void type_error(std::string_view expected) const;
};

struct KeyValue {
    std::string_view key;
    Value value;
};

// ---------------------------------------------------------------------------------------------------------------
// Tensors

constexpr int max_dims = 4;

struct TensorInfo {
    std::string_view name;
    TensorType type;
    uint32_t n_dims;
    std::array<int64_t, max_dims> shape;  // ggml order: shape[0] is the row length; unused dims are 1
    uint64_t offset;                      // relative to the data section, as stored in the file
    uint64_t n_bytes;

    int64_t n_elements() const { return shape[0] * shape[1] * shape[2] * shape[3]; }
    int64_t n_rows() const { return shape[1] * shape[2] * shape[3]; }
};

// ---------------------------------------------------------------------------------------------------------------
// Reader

class File {
public:
    // Maps and validates the file. Throws ember::Error with a one-line message on any problem.
    static File open(const std::filesystem::path& path);
    // Validates a buffer the caller keeps alive (fuzzing, in-memory tests). `name` is used in messages.
    static File from_memory(std::span<const std::byte> bytes, std::string name);

    File(File&&) noexcept;
    File& operator=(File&&) noexcept;
    ~File();

    const std::string& name() const;  // the path as given, used in every message
    uint32_t version() const;
    uint32_t alignment() const;
    uint64_t size() const;          // bytes in the file
    uint64_t data_offset() const;   // absolute offset of the data section

    // Metadata in file order.
    std::span<const KeyValue> metadata() const;
    const Value* find(std::string_view key) const;
    bool has(std::string_view key) const { return find(key) != nullptr; }
    // Throws "<file>: missing key 'x'" when absent and "<file>: key 'x' has type u32, expected string" on a
    // type mismatch.
    const Value& at(std::string_view key) const;
    std::string_view get_string(std::string_view key) const;
    int64_t get_int(std::string_view key) const;
    uint32_t get_u32(std::string_view key) const;
    double get_float(std::string_view key) const;
    bool get_bool(std::string_view key) const;
    // Same, with a default when the key is absent (a present key of the wrong type is still an error).
    std::string_view get_string(std::string_view key, std::string_view fallback) const;
    int64_t get_int(std::string_view key, int64_t fallback) const;
    uint32_t get_u32(std::string_view key, uint32_t fallback) const;
    double get_float(std::string_view key, double fallback) const;
    bool get_bool(std::string_view key, bool fallback) const;

    // Tensors in file order.
    std::span<const TensorInfo> tensors() const;
    const TensorInfo* find_tensor(std::string_view name) const;
    const TensorInfo& tensor(std::string_view name) const;  // throws "<file>: missing tensor 'x'"
    std::span<const std::byte> tensor_data(const TensorInfo& info) const;

private:
    struct Impl;
    explicit File(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------------------------------------------
// What a file contains, beyond its architecture: used by `ember-gguf inspect` and by model loading.

// How a file says it carries an embedded DFlash draft (drafted-gguf.md): dflash.embedded when it is a bool (true:
// marked; false: none, whatever tensors it has), else dflash.block_count with the dflash.fc.weight tensor
// (unmarked: a writer that left the marker out, drafted all the same). The one rule for loading, the library and
// ember-gguf.
enum class DflashMark { none, marked, unmarked };
DflashMark dflash_mark(const File& file);

struct Capabilities {
    std::string architecture;          // general.architecture, empty when absent
    uint32_t mtp_layers = 0;           // <arch>.nextn_predict_layers
    bool mtp_tensors_present = false;  // blk.j.nextn.{eh_proj,enorm,hnorm} for every MTP layer j
    bool dflash_marker = false;        // dflash.embedded == true
    uint32_t dflash_tensors = 0;       // tensors named dflash.*
    DflashMark dflash = DflashMark::none;
    bool vision_projector = false;     // clip.* keys (an mmproj file)
    bool has_chat_template = false;    // tokenizer.chat_template

    bool has_mtp() const { return mtp_layers > 0 && mtp_tensors_present; }
    bool has_dflash() const { return dflash != DflashMark::none; }
};

Capabilities describe(const File& file);

// Sliding-window attention (Gemma 3's local layers): the window and, per layer, whether the layer uses it, from
// <arch>.attention.sliding_window and sliding_window_pattern. window 0 and no layers for files without one, and for
// an architecture without sliding windows (default_period 0: its keys are not read). default_period N, for a file
// that gives no pattern, makes layer i local unless i % N == N - 1; which architectures have sliding windows, and
// their N, is the architecture registry's to say. Throws ember::Error naming the file and key on an impossible
// layout.
struct SlidingWindowLayout {
    int64_t window = 0;
    std::vector<bool> local_layers;
};
SlidingWindowLayout read_sliding_window(const File& file, const std::string& arch, int64_t n_layer,
                                        int64_t default_period);
// The most tokens one forward pass of the engine's transformers takes (model/hparams.h uses it), which a
// sliding-window cache keeps room for.
inline constexpr int64_t kTransformerMaxBatch = 512;
// The rows the engine keeps for a sliding-window layer at context n_ctx: twice the window plus one batch of up to
// max_batch tokens (the window's rows move to the front when a batch would run past the end).
inline int64_t sliding_window_cache_rows(int64_t window, int64_t n_ctx, int64_t max_batch = kTransformerMaxBatch) {
    return n_ctx < 2 * window + max_batch ? n_ctx : 2 * window + max_batch;
}

// ---------------------------------------------------------------------------------------------------------------
// Writer

struct ArrayValue;
// An owned metadata value for writing.
using OwnedValue = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool, std::string,
                                std::shared_ptr<const ArrayValue>, uint64_t, int64_t, double>;

struct ArrayValue {
    ValueType element_type;
    std::vector<OwnedValue> items;
};

OwnedValue make_array(ValueType element_type, std::vector<OwnedValue> items);
OwnedValue make_string_array(const std::vector<std::string>& items);
// A copy of a value read from a file (e.g. to carry metadata over into a new file).
OwnedValue to_owned(const Value& value);
ValueType type_of(const OwnedValue& value);

class Writer {
public:
    // Fills `out` (exactly the tensor's byte size) with the tensor's data; called once, in tensor order.
    using Producer = std::function<void(std::span<std::byte> out)>;

    // A file whose alignment is not 32 gets a general.alignment key (at the end, unless set() placed it).
    explicit Writer(uint32_t alignment = 32);

    // Adds or replaces a key (replacing keeps its position). `general.alignment` must match the alignment.
    void set(std::string key, OwnedValue value);
    void remove(std::string_view key);
    bool has(std::string_view key) const;

    // The data is referenced, not copied: it must outlive write().
    void add_tensor(std::string name, TensorType type, std::span<const int64_t> shape, std::span<const std::byte> data);
    void add_tensor(std::string name, TensorType type, std::span<const int64_t> shape, Producer producer);

    // Writes a GGUF v3 file through a temporary file in the same directory, renamed into place at the end.
    void write(const std::filesystem::path& path) const;
    // The whole file in memory (tests and fuzz seeds).
    std::vector<std::byte> to_bytes() const;

private:
    struct PendingTensor {
        std::string name;
        TensorType type;
        std::vector<int64_t> shape;
        uint64_t n_bytes;
        std::span<const std::byte> data;
        Producer producer;
    };
    template <typename Sink> void emit(Sink& sink) const;

    uint32_t alignment_;
    std::vector<std::pair<std::string, OwnedValue>> metadata_;
    std::vector<PendingTensor> tensors_;
};

}  // namespace ember::gguf
