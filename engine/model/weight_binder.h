// SPDX-License-Identifier: MIT
// Binds a file's tensors to backend tensors, checking each one's shape, and reports load progress.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace ember::model {

class WeightBinder {
public:
    WeightBinder(const gguf::File& file, Backend& backend, const LoadProgress& progress);

    // The tensor `name` with exactly `shape` (ggml order, row length first). Throws
    // "<file>: missing tensor 'x'" or "<file>: tensor 'x' has shape [a, b], expected [c, d]".
    Tensor require(const std::string& name, std::initializer_list<int64_t> shape);
    std::optional<Tensor> optional(const std::string& name, std::initializer_list<int64_t> shape);
    // Only F32 weights (norms, biases).
    Tensor require_f32(const std::string& name, std::initializer_list<int64_t> shape);
    std::optional<Tensor> optional_f32(const std::string& name, std::initializer_list<int64_t> shape);

    // The buffers behind the bound tensors (the model keeps them).
    std::vector<std::unique_ptr<Buffer>> take_buffers() { return std::move(buffers_); }
    uint64_t bound_bytes() const { return bound_bytes_; }
    uint64_t bound_elements() const { return bound_elements_; }

private:
    Tensor bind(const gguf::TensorInfo& info);

    const gguf::File& file_;
    Backend& backend_;
    const LoadProgress& progress_;
    uint64_t total_bytes_ = 0;
    uint64_t bound_bytes_ = 0;
    uint64_t bound_elements_ = 0;
    std::vector<std::unique_ptr<Buffer>> buffers_;
};

std::string shape_string(std::span<const int64_t> shape);

// The expert matrices of mixture-of-experts layers (ffn_{gate,up,down}_exps): bound through
// Backend::map_expert_weights, and the part of a model that can stay on the host.
bool is_expert_tensor(std::string_view name);

}  // namespace ember::model
