// SPDX-License-Identifier: MIT
// Binding a file's tensors to backend tensors with shape checks and load progress.
#include "model/weight_binder.h"

namespace ember::model {

std::string shape_string(std::span<const int64_t> shape) {
    std::string out = "[";
    for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
    return out + "]";
}

WeightBinder::WeightBinder(const gguf::File& file, Backend& backend, const LoadProgress& progress)
    : file_(file), backend_(backend), progress_(progress) {
    for (const gguf::TensorInfo& t : file.tensors()) total_bytes_ += t.n_bytes;
}

bool is_expert_tensor(std::string_view name) { return name.find("_exps.") != std::string_view::npos; }

Tensor WeightBinder::bind(const gguf::TensorInfo& info) {
    const std::span<const std::byte> bytes = file_.tensor_data(info);
    buffers_.push_back(is_expert_tensor(info.name) ? backend_.map_expert_weights(bytes) : backend_.map_weights(bytes));
    Tensor t;
    t.buffer = buffers_.back().get();
    t.type = info.type;
    t.cols = info.shape[0];
    t.rows = info.n_rows();
    t.row_stride = gguf::row_bytes(info.type, info.shape[0]);
    bound_bytes_ += info.n_bytes;
    bound_elements_ += static_cast<uint64_t>(info.n_elements());
    if (progress_ && !progress_(total_bytes_ ? static_cast<double>(bound_bytes_) / total_bytes_ : 1.0))
        throw LoadCancelled();
    return t;
}

std::optional<Tensor> WeightBinder::optional(const std::string& name, std::initializer_list<int64_t> shape) {
    const gguf::TensorInfo* info = file_.find_tensor(name);
    if (!info) return std::nullopt;
    bool same = shape.size() <= gguf::max_dims;
    size_t d = 0;
    for (int64_t want : shape) same = same && info->shape[d++] == want;
    for (; d < gguf::max_dims; ++d) same = same && info->shape[d] == 1;
    if (!same)
        throw Error(file_.name() + ": tensor '" + name + "' has shape " +
                    shape_string(std::span(info->shape.data(), info->n_dims)) + ", expected " +
                    shape_string(std::span(shape.begin(), shape.size())));
    return bind(*info);
}

Tensor WeightBinder::require(const std::string& name, std::initializer_list<int64_t> shape) {
    std::optional<Tensor> t = optional(name, shape);
    if (!t) throw Error(file_.name() + ": missing tensor '" + name + "'");
    return *t;
}

std::optional<Tensor> WeightBinder::optional_f32(const std::string& name, std::initializer_list<int64_t> shape) {
    std::optional<Tensor> t = optional(name, shape);
    if (t && t->type != gguf::TensorType::F32)
        throw Error(file_.name() + ": tensor '" + name + "' has type " + std::string(gguf::traits(t->type).name) +
                    ", expected f32");
    return t;
}

Tensor WeightBinder::require_f32(const std::string& name, std::initializer_list<int64_t> shape) {
    std::optional<Tensor> t = optional_f32(name, shape);
    if (!t) throw Error(file_.name() + ": missing tensor '" + name + "'");
    return *t;
}

}  // namespace ember::model
