// SPDX-License-Identifier: MIT
// The file-level quantization of ember/quantize.h: every input row checked first, then tensors converted row by row
// on a thread pool as the writer asks for them.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "cpu/cpu_kernels.h"
#include "quant/quant.h"
#include "ember/quantize.h"

namespace ember::quant {

namespace {

constexpr int64_t kWeightsPerBatch = int64_t{1} << 22;  // rows are converted in batches of about this many weights

// Converts (or copies) one tensor into `out`.
void convert_tensor(const gguf::File& in, const TensorConversion& c, std::span<std::byte> out, cpu::ThreadPool& pool,
                    const std::function<void(uint64_t)>& on_progress) {
    const gguf::TensorInfo& t = *c.tensor;
    const gguf::TensorType from = t.type;
    const int64_t cols = t.shape[0];
    const int64_t rows = t.n_rows();
    const std::span<const std::byte> src = in.tensor_data(t);
    const auto in_row = static_cast<size_t>(gguf::row_bytes(from, cols));
    const auto out_row = static_cast<size_t>(gguf::row_bytes(c.to, cols));
    const bool convert_rows = from != c.to;

    const int64_t batch = std::max<int64_t>(1, kWeightsPerBatch / std::max<int64_t>(cols, 1));
    for (int64_t r0 = 0; r0 < rows; r0 += batch) {
        const int64_t r1 = std::min(rows, r0 + batch);
        pool.parallel_for(r1 - r0, [&](int64_t begin, int64_t end) {
            std::vector<float> buffer(convert_rows ? static_cast<size_t>(cols) : 0);
            for (int64_t r = r0 + begin; r < r0 + end; ++r) {
                const std::byte* s = src.data() + static_cast<size_t>(r) * in_row;
                std::byte* d = out.data() + static_cast<size_t>(r) * out_row;
                if (!convert_rows) {
                    std::memcpy(d, s, in_row);
                } else {
                    dequantize_row(from, s, buffer.data(), cols);
                    quantize_row(c.to, buffer.data(), d, cols);
                }
            }
        });
        if (on_progress) on_progress(static_cast<uint64_t>((r1 - r0) * cols));
    }
}

}  // namespace

void validate_file_rows(const gguf::File& in, int threads) {
    cpu::ThreadPool pool(std::max(threads, 1));
    for (const gguf::TensorInfo& t : in.tensors()) {
        if (!can_dequantize(t.type)) continue;
        const int64_t cols = t.shape[0];
        const auto in_row = static_cast<size_t>(gguf::row_bytes(t.type, cols));
        const std::byte* data = in.tensor_data(t).data();
        pool.parallel_for(t.n_rows(), [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
                try {
                    validate_row(t.type, data + static_cast<size_t>(r) * in_row, cols);
                } catch (const Error& e) {
                    throw Error(in.name() + ": tensor '" + std::string(t.name) + "' row " + std::to_string(r) + ": " +
                                e.what());
                }
            }
        });
    }
}

void add_converted_tensors(const gguf::File& in, std::span<const TensorConversion> conversions, int threads,
                           std::function<void(uint64_t weights)> on_progress, gguf::Writer& out) {
    // Shared by the producers, which the writer calls one at a time during write().
    auto pool = std::make_shared<cpu::ThreadPool>(std::max(threads, 1));
    auto progress = std::make_shared<std::function<void(uint64_t)>>(std::move(on_progress));
    for (const TensorConversion& c : conversions) {
        const gguf::TensorInfo& t = *c.tensor;
        const std::vector<int64_t> shape(t.shape.begin(), t.shape.begin() + t.n_dims);
        out.add_tensor(std::string(t.name), c.to, shape, [&in, c, pool, progress](std::span<std::byte> bytes) {
            convert_tensor(in, c, bytes, *pool, *progress);
        });
    }
}

}  // namespace ember::quant
