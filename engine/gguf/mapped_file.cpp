// SPDX-License-Identifier: MIT
// A read-only mmap of a whole file.
#include "gguf/mapped_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ember/error.h"

namespace ember::gguf {

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& why) {
    throw Error(path.string() + ": cannot open: " + why);
}

}  // namespace

MappedFile::MappedFile(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(path, std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        fail(path, std::strerror(err));
    }
    if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        fail(path, "is a directory");
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        fail(path, "not a regular file");
    }
    if (st.st_size == 0) {
        ::close(fd);
        fail(path, "the file is empty");
    }
    size_ = static_cast<size_t>(st.st_size);
    void* mapping = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    const int err = errno;
    ::close(fd);
    if (mapping == MAP_FAILED) fail(path, std::string("mmap failed: ") + std::strerror(err));
    data_ = static_cast<const std::byte*>(mapping);
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace ember::gguf
