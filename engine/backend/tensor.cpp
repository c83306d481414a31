// SPDX-License-Identifier: MIT
// Tensor views: contiguity, row and column ranges, reshapes, and make_tensor.
#include "backend/backend.h"

namespace ember {

bool Tensor::contiguous() const { return row_stride == gguf::row_bytes(type, cols); }

Tensor Tensor::column_range(int64_t first, int64_t n) const {
    const gguf::TypeTraits& t = gguf::traits(type);
    if (t.block_size != 1) throw Error("column views of block-quantized tensors are not supported");
    if (first < 0 || n < 0 || first + n > cols)
        throw Error("columns [" + std::to_string(first) + ", " + std::to_string(first + n) + ") outside " +
                    std::to_string(cols));
    Tensor v = *this;
    v.offset += static_cast<size_t>(first) * t.block_bytes;
    v.cols = n;
    return v;
}

Tensor Tensor::reshaped(int64_t new_cols) const {
    if (!contiguous()) throw Error("reshape of a non-contiguous tensor");
    const int64_t total = rows * cols;
    if (new_cols <= 0 || total % new_cols != 0)
        throw Error("cannot view " + std::to_string(rows) + "x" + std::to_string(cols) + " as rows of " +
                    std::to_string(new_cols));
    Tensor t = *this;
    t.cols = new_cols;
    t.rows = total / new_cols;
    t.row_stride = gguf::row_bytes(type, new_cols);
    return t;
}

Tensor make_tensor(Buffer& buffer, gguf::TensorType type, int64_t rows, int64_t cols, size_t offset) {
    Tensor t;
    t.buffer = &buffer;
    t.offset = offset;
    t.type = type;
    t.rows = rows;
    t.cols = cols;
    t.row_stride = gguf::row_bytes(type, cols);
    if (offset + t.bytes() > buffer.size())
        throw Error("tensor of " + std::to_string(t.bytes()) + " bytes at offset " + std::to_string(offset) +
                    " does not fit a buffer of " + std::to_string(buffer.size()) + " bytes");
    return t;
}

}  // namespace ember
