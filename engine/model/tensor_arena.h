// SPDX-License-Identifier: MIT
// Lays out several tensors in one backend buffer: plan() them, allocate() once, then use the tensors.
#pragma once

#include <memory>
#include <vector>

#include "backend/backend.h"

namespace ember::model {

class TensorArena {
public:
    // Reserves room for a tensor; returns its index for get().
    size_t plan(gguf::TensorType type, int64_t rows, int64_t cols) {
        constexpr size_t alignment = 64;  // a multiple of every element size, so whole() stays exact
        offset_ = (offset_ + alignment - 1) / alignment * alignment;
        planned_.push_back({type, rows, cols, offset_});
        offset_ += gguf::row_bytes(type, cols) * static_cast<size_t>(rows);
        return planned_.size() - 1;
    }
    void allocate(Backend& backend) { buffer_ = backend.allocate(offset_ ? offset_ : 1); }
    Tensor get(size_t index) const {
        const Planned& p = planned_[index];
        return make_tensor(*buffer_, p.type, p.rows, p.cols, p.offset);
    }
    size_t bytes() const { return offset_; }
    // The whole arena as one row of F32 values (for copying every tensor at once; F32 arenas only).
    Tensor whole() const { return make_tensor(*buffer_, gguf::TensorType::F32, 1, static_cast<int64_t>(offset_ / 4)); }

private:
    struct Planned {
        gguf::TensorType type;
        int64_t rows;
        int64_t cols;
        size_t offset;
    };
    std::vector<Planned> planned_;
    size_t offset_ = 0;
    std::unique_ptr<Buffer> buffer_;
};

}  // namespace ember::model
