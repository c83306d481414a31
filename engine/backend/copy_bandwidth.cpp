// SPDX-License-Identifier: MIT
// measure_copy_bandwidth: timed F32 copies on a backend's device, the roofline of the decode benchmarks.
#include <algorithm>
#include <chrono>

#include "backend/backend.h"

namespace ember {

CopyBandwidth measure_copy_bandwidth(const std::string& name, size_t bytes, int runs) {
    std::unique_ptr<Backend> backend = make_backend(name);
    const int64_t cols = 1024;
    const int64_t rows = std::max<int64_t>(1, static_cast<int64_t>(bytes / (cols * 4)));
    auto a = backend->allocate(static_cast<size_t>(rows * cols * 4));
    auto b = backend->allocate(static_cast<size_t>(rows * cols * 4));
    const Tensor ta = make_tensor(*a, gguf::TensorType::F32, rows, cols);
    const Tensor tb = make_tensor(*b, gguf::TensorType::F32, rows, cols);
    backend->convert(ta, tb);  // warm-up: pipeline creation, first touch
    backend->synchronize();
    std::vector<double> seconds;
    for (int r = 0; r < std::max(runs, 1); ++r) {
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < 10; ++i) backend->convert(i % 2 ? tb : ta, i % 2 ? ta : tb);
        backend->synchronize();
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 10);
    }
    std::sort(seconds.begin(), seconds.end());
    return {backend->name(), 2.0 * static_cast<double>(ta.bytes()) / seconds[seconds.size() / 2]};
}

}  // namespace ember
