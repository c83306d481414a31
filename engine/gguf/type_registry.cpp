// SPDX-License-Identifier: MIT
// Block sizes follow ggml (ggml.c type_traits) and, for ids 100-104, ../specs/rocmfp4.md §1.
#include <algorithm>
#include <array>
#include <cctype>

#include "ember/gguf.h"

namespace ember::gguf {

namespace {

constexpr int qk_k = 256;

constexpr std::array kTypes = {
    TypeTraits{TensorType::F32, "f32", 1, 4, false},
    TypeTraits{TensorType::F16, "f16", 1, 2, false},
    TypeTraits{TensorType::Q4_0, "q4_0", 32, 2 + 16, true},
    TypeTraits{TensorType::Q4_1, "q4_1", 32, 2 + 2 + 16, true},
    TypeTraits{TensorType::Q5_0, "q5_0", 32, 2 + 4 + 16, true},
    TypeTraits{TensorType::Q5_1, "q5_1", 32, 2 + 2 + 4 + 16, true},
    TypeTraits{TensorType::Q8_0, "q8_0", 32, 2 + 32, true},
    TypeTraits{TensorType::Q8_1, "q8_1", 32, 4 + 4 + 32, true},
    TypeTraits{TensorType::Q2_K, "q2_K", qk_k, 2 + 2 + qk_k / 16 + qk_k / 4, true},
    TypeTraits{TensorType::Q3_K, "q3_K", qk_k, 2 + qk_k / 4 + qk_k / 8 + 12, true},
    TypeTraits{TensorType::Q4_K, "q4_K", qk_k, 2 + 2 + qk_k / 2 + 12, true},
    TypeTraits{TensorType::Q5_K, "q5_K", qk_k, 2 + 2 + qk_k / 2 + qk_k / 8 + 12, true},
    TypeTraits{TensorType::Q6_K, "q6_K", qk_k, 2 + qk_k / 2 + qk_k / 4 + qk_k / 16, true},
    TypeTraits{TensorType::Q8_K, "q8_K", qk_k, 4 + qk_k + qk_k / 8, true},
    TypeTraits{TensorType::IQ2_XXS, "iq2_xxs", qk_k, 2 + qk_k / 4, true},
    TypeTraits{TensorType::IQ2_XS, "iq2_xs", qk_k, 2 + qk_k / 4 + qk_k / 32, true},
    TypeTraits{TensorType::IQ3_XXS, "iq3_xxs", qk_k, 2 + qk_k / 4 + qk_k / 8, true},
    TypeTraits{TensorType::IQ1_S, "iq1_s", qk_k, 2 + qk_k / 8 + qk_k / 16, true},
    TypeTraits{TensorType::IQ4_NL, "iq4_nl", 32, 2 + 16, true},
    TypeTraits{TensorType::IQ3_S, "iq3_s", qk_k, 2 + qk_k / 4 + qk_k / 8 + qk_k / 32 + 4, true},
    TypeTraits{TensorType::IQ2_S, "iq2_s", qk_k, 2 + qk_k / 4 + qk_k / 16, true},
    TypeTraits{TensorType::IQ4_XS, "iq4_xs", qk_k, 2 + 2 + qk_k / 2 + qk_k / 64, true},
    TypeTraits{TensorType::I8, "i8", 1, 1, false},
    TypeTraits{TensorType::I16, "i16", 1, 2, false},
    TypeTraits{TensorType::I32, "i32", 1, 4, false},
    TypeTraits{TensorType::I64, "i64", 1, 8, false},
    TypeTraits{TensorType::F64, "f64", 1, 8, false},
    TypeTraits{TensorType::IQ1_M, "iq1_m", qk_k, qk_k / 8 + qk_k / 16 + qk_k / 32, true},
    TypeTraits{TensorType::BF16, "bf16", 1, 2, false},
    TypeTraits{TensorType::TQ1_0, "tq1_0", qk_k, 2 + 4 * 13, true},
    TypeTraits{TensorType::TQ2_0, "tq2_0", qk_k, 2 + 64, true},
    TypeTraits{TensorType::MXFP4, "mxfp4", 32, 1 + 16, true},
    TypeTraits{TensorType::NVFP4, "nvfp4", 64, 4 + 32, true},
    TypeTraits{TensorType::Q1_0, "q1_0", 128, 2 + 16, true},
    TypeTraits{TensorType::Q4_0_ROCMFP4, "q4_0_rocmfp4", 32, 18, true},
    TypeTraits{TensorType::Q4_0_ROCMFP4_FAST, "q4_0_rocmfp4_fast", 32, 17, true},
    TypeTraits{TensorType::Q6_0_ROCMFPX, "q6_0_rocmfpx", 32, 26, true},
    TypeTraits{TensorType::Q8_0_ROCMFPX, "q8_0_rocmfpx", 32, 33, true},
    TypeTraits{TensorType::Q3_0_ROCMFPX, "q3_0_rocmfpx", 32, 14, true},
};

constexpr bool sorted_by_id() {
    for (size_t i = 1; i < kTypes.size(); ++i)
        if (static_cast<uint32_t>(kTypes[i - 1].type) >= static_cast<uint32_t>(kTypes[i].type)) return false;
    return true;
}
static_assert(sorted_by_id(), "the type table must stay sorted by id");

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

}  // namespace

std::span<const TypeTraits> known_types() { return kTypes; }

const TypeTraits* find_type(uint32_t id) {
    const auto it = std::lower_bound(kTypes.begin(), kTypes.end(), id,
                                     [](const TypeTraits& t, uint32_t v) { return static_cast<uint32_t>(t.type) < v; });
    if (it == kTypes.end() || static_cast<uint32_t>(it->type) != id) return nullptr;
    return &*it;
}

const TypeTraits& traits(TensorType type) {
    const TypeTraits* t = find_type(static_cast<uint32_t>(type));
    if (!t) throw Error("unknown tensor type id " + std::to_string(static_cast<uint32_t>(type)));
    return *t;
}

std::optional<TensorType> type_from_name(std::string_view name) {
    for (const TypeTraits& t : kTypes)
        if (iequals(t.name, name)) return t.type;
    return std::nullopt;
}

std::string known_type_list() {
    std::string out;
    for (const TypeTraits& t : kTypes) {
        if (!out.empty()) out += ", ";
        out += std::string(t.name) + " (" + std::to_string(static_cast<uint32_t>(t.type)) + ")";
    }
    return out;
}

uint64_t row_bytes(TensorType type, int64_t n) {
    const TypeTraits& t = traits(type);
    if (n < 0 || n % t.block_size != 0)
        throw Error("row of " + std::to_string(n) + " weights is not a multiple of the " + std::string(t.name) +
                    " block size " + std::to_string(t.block_size));
    return static_cast<uint64_t>(n / t.block_size) * t.block_bytes;
}

}  // namespace ember::gguf
