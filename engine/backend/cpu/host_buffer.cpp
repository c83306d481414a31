// SPDX-License-Identifier: MIT
// Host buffers: 64-byte aligned allocations and views of bytes owned elsewhere.
#include "backend/cpu/host_buffer.h"

#include <cstring>
#include <new>

namespace ember::cpu_backend {

HostBuffer::HostBuffer(size_t bytes) : size_(bytes) {
    constexpr size_t alignment = 64;
    const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    data_ = static_cast<std::byte*>(std::aligned_alloc(alignment, rounded ? rounded : alignment));
    if (!data_) throw Error("out of memory allocating " + std::to_string(bytes) + " bytes");
    std::memset(data_, 0, rounded);
}

HostBuffer::~HostBuffer() { std::free(data_); }

}  // namespace ember::cpu_backend
