// SPDX-License-Identifier: MIT
// A read-only memory mapping of a whole file.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>

namespace ember::gguf {

class MappedFile {
public:
    // Throws ember::Error "<path>: cannot open: <reason>" (missing, directory, empty, unreadable).
    explicit MappedFile(const std::filesystem::path& path);
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile();

    std::span<const std::byte> bytes() const { return {data_, size_}; }

private:
    const std::byte* data_ = nullptr;
    size_t size_ = 0;
};

}  // namespace ember::gguf
