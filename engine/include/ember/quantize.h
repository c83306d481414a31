// SPDX-License-Identifier: MIT
// Quantizing a GGUF file, public (ember-quantize): which types Ember can read and write, the check of every input
// row before any work, and the conversion of a file's tensors to chosen types into a gguf::Writer. The row codecs
// themselves are private to the engine (quant/quant.h).
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "ember/gguf.h"

namespace ember::quant {

bool can_quantize(gguf::TensorType type);  // a reference quantizer exists
bool can_dequantize(gguf::TensorType type);

// Checks every row of every tensor of `in` whose type can_dequantize knows (scales in range, floats finite) on
// `threads` threads. Throws ember::Error "FILE: tensor 'NAME' row R: problem" at the first bad row.
void validate_file_rows(const gguf::File& in, int threads);

// One tensor of the input and the type it is written as (its own type: copied byte for byte).
struct TensorConversion {
    const gguf::TensorInfo* tensor = nullptr;
    gguf::TensorType to = gguf::TensorType::F32;
};

// Adds each conversion's tensor to `out`, produced when `out` writes it: rows dequantized from the input's type and
// quantized to the target (in batches on `threads` threads), or copied when the types are the same. on_progress
// receives the weights done after each batch. `in` and `conversions` must outlive out.write().
void add_converted_tensors(const gguf::File& in, std::span<const TensorConversion> conversions, int threads,
                           std::function<void(uint64_t weights)> on_progress, gguf::Writer& out);

}  // namespace ember::quant
