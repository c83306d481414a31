// SPDX-License-Identifier: MIT
#include "ember/backend.h"

namespace ember {

bool Tensor::contiguous() const { return row_stride == gguf::row_bytes(type, cols); }

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
