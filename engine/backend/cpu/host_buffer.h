// SPDX-License-Identifier: MIT
// Buffers in host memory: owned and 64-byte aligned, or a view of bytes someone else owns (the file mapping).
#pragma once

#include <cstdlib>
#include <span>

#include "backend/backend.h"

namespace ember::cpu_backend {

class HostBuffer final : public Buffer {
public:
    explicit HostBuffer(size_t bytes);
    ~HostBuffer() override;
    HostBuffer(const HostBuffer&) = delete;
    HostBuffer& operator=(const HostBuffer&) = delete;
    size_t size() const override { return size_; }
    std::byte* host() override { return data_; }

private:
    std::byte* data_ = nullptr;
    size_t size_ = 0;
};

class BorrowedBuffer final : public Buffer {
public:
    explicit BorrowedBuffer(std::span<const std::byte> bytes) : bytes_(bytes) {}
    size_t size() const override { return bytes_.size(); }
    // Weights are never written; the const_cast only serves the common Buffer interface.
    std::byte* host() override { return const_cast<std::byte*>(bytes_.data()); }

private:
    std::span<const std::byte> bytes_;
};

// Host pointer of a tensor's first row.
inline std::byte* host_data(const Tensor& t) { return t.buffer->host() + t.offset; }
inline float* host_f32(const Tensor& t) { return reinterpret_cast<float*>(host_data(t)); }
// Row r of an F32 tensor (strided views included).
inline float* host_row(const Tensor& t, int64_t r) {
    return reinterpret_cast<float*>(host_data(t) + static_cast<size_t>(r) * t.row_stride);
}

}  // namespace ember::cpu_backend
