// SPDX-License-Identifier: MIT
// The cooperative-matrix prefill kernels (matmul_coop, experts_coop) run where the device has them and only there,
// EMBER_VULKAN_COOPERATIVE_MATRIX=0 turns them off, and prefill products by either path match the reference.
// The path shows in one product: a Q8_0 weight of scale 1 + 2^-10 and code 127 is 127.1240234375 in f32 but has no
// f16 value (f16 has a step of 1/16 there), and the cooperative kernels dequantize weights to f16.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include "backend/reference_ops.h"
#include "backend/backend.h"
#include "quant/quant.h"

using namespace ember;
using gguf::TensorType;

namespace {

constexpr double kExact = 127.1240234375;  // (1 + 2^-10) * 127

std::unique_ptr<Backend> make_vulkan(bool forced_off) {
    if (forced_off) setenv("EMBER_VULKAN_COOPERATIVE_MATRIX", "0", 1);
    std::unique_ptr<Backend> backend = make_backend("vulkan");
    unsetenv("EMBER_VULKAN_COOPERATIVE_MATRIX");
    return backend;
}

bool device_has_coopmat(const Backend& backend) {
    for (const DeviceInfo& d : list_devices())
        if (d.backend == "vulkan" && backend.name() == "vulkan (" + d.name + ")")
            return std::find(d.features.begin(), d.features.end(), "cooperative matrix (KHR)") != d.features.end();
    return false;
}

struct Scratch {
    Backend& backend;
    std::vector<std::unique_ptr<Buffer>> buffers;
    Tensor tensor(TensorType type, int64_t rows, int64_t cols, std::span<const std::byte> bytes) {
        buffers.push_back(backend.allocate(bytes.size()));
        const Tensor t = make_tensor(*buffers.back(), type, rows, cols);
        backend.write(t, bytes);
        return t;
    }
    Tensor output(int64_t rows, int64_t cols) {
        buffers.push_back(backend.allocate(static_cast<size_t>(rows * cols) * 4));
        return make_tensor(*buffers.back(), TensorType::F32, rows, cols);
    }
    std::vector<float> read(const Tensor& t) {
        std::vector<float> out(static_cast<size_t>(t.rows * t.cols));
        backend.read(t, std::as_writable_bytes(std::span(out)));
        return out;
    }
};

// Matmul and grouped expert products of a weight whose first element is 127.124... and the others 0, with x = e0:
// every output is that weight as the kernel saw it.
void expect_path(bool forced_off, bool* device_has) {
    const std::unique_ptr<Backend> backend = make_vulkan(forced_off);
    *device_has = device_has_coopmat(*backend);
    const bool coop = *device_has && !forced_off;
    Scratch s{*backend, {}};
    const int64_t cols = 32, tokens = 300;  // over 32 rows: prefill; 300 slots of one expert: grouped
    std::vector<uint8_t> block = {0x01, 0x3c, 127};  // d = f16 0x3c01 = 1 + 2^-10, q[0] = 127, the rest 0
    block.resize(34, 0);
    std::vector<std::byte> two_rows(68);
    std::memcpy(two_rows.data(), block.data(), 34);
    std::memcpy(two_rows.data() + 34, block.data(), 34);
    const Tensor w = s.tensor(TensorType::Q8_0, 2, cols, two_rows);
    std::vector<float> x(static_cast<size_t>(tokens * cols), 0.0f);
    for (int64_t t = 0; t < tokens; ++t) x[static_cast<size_t>(t * cols)] = 1.0f;
    const Tensor tx = s.tensor(TensorType::F32, tokens, cols, std::as_bytes(std::span(x)));
    const std::vector<int32_t> ids(static_cast<size_t>(tokens), 1);
    const Tensor tids = s.tensor(TensorType::I32, tokens, 1, std::as_bytes(std::span(ids)));
    const Tensor out = s.output(tokens, 2), y = s.output(tokens, 1);
    backend->matmul(w, tx, out);
    backend->matmul_experts(w, 2, tx, tids, y);
    const std::string what = std::string(coop ? "cooperative" : "tiled") + (forced_off ? " (forced off)" : "");
    std::vector<float> got = s.read(out);
    const std::vector<float> got_experts = s.read(y);
    got.insert(got.end(), got_experts.begin(), got_experts.end());
    for (float v : got) {
        if (coop)  // f16 rounds to nearest (127.125) or toward zero (127.0625): either is not the f32 value
            EXPECT_TRUE(v == 127.125f || v == 127.0625f) << what << ": " << v;
        else
            EXPECT_EQ(v, static_cast<float>(kExact)) << what;
    }
}

TEST(VulkanCooperativeMatrix, UsedExactlyWhereTheDeviceHasIt) {
    bool device_has = false;
    expect_path(true, &device_has);
    expect_path(false, &device_has);
    if (!device_has) GTEST_SKIP() << "this Vulkan device has no cooperative matrices: only the tiled kernels ran";
}

// Prefill products (bias included) and grouped expert products of several weight types against the reference, with
// the cooperative kernels where the device has them and the tiled ones otherwise. Rows, tokens and slots are not
// multiples of the tiles. Block types lose about 2^-12 of each weight and activation to f16; F16 weights take the
// tiled kernels and keep f32 accuracy.
TEST(VulkanCooperativeMatrix, PrefillMatchesTheReference) {
    const std::unique_ptr<Backend> backend = make_vulkan(false);
    Scratch s{*backend, {}};
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const auto random = [&](int64_t n) {
        std::vector<float> v(static_cast<size_t>(n));
        for (float& f : v) f = normal(rng);
        return v;
    };
    const auto upload = [&](TensorType type, int64_t rows, int64_t cols, reference::Matrix& stored) {
        const std::vector<float> values = random(rows * cols);
        const size_t stride = gguf::row_bytes(type, cols);
        std::vector<std::byte> bytes(stride * static_cast<size_t>(rows));
        for (int64_t r = 0; r < rows; ++r)
            quant::quantize_row(type, values.data() + r * cols, bytes.data() + r * stride, cols);
        stored = reference::dequantize(type, bytes, rows, cols);
        return s.tensor(type, rows, cols, bytes);
    };
    const auto expect_close = [](const std::vector<float>& got, const reference::Matrix& want, double rel,
                                 const std::string& what) {
        ASSERT_EQ(got.size(), want.size()) << what;
        double scale = 1e-30, worst = 0;
        for (double v : want) scale = std::max(scale, std::abs(v));
        for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
        EXPECT_LE(worst / scale, rel) << what << ": max error " << worst << " against max |value| " << scale;
    };
    for (TensorType type : {TensorType::F16, TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_K, TensorType::Q6_K,
                            TensorType::MXFP4, TensorType::Q4_0_ROCMFP4}) {
        const std::string name(gguf::traits(type).name);
        const double rel = type == TensorType::F16 ? 1e-5 : 1e-3;  // F16: the tiled kernels
        const int64_t rows = 136, cols = 512, tokens = 100;
        reference::Matrix w_stored;
        const Tensor w = upload(type, rows, cols, w_stored);
        const std::vector<float> x = random(tokens * cols), b = random(rows);
        const Tensor bias = s.tensor(TensorType::F32, 1, rows, std::as_bytes(std::span(b)));
        const Tensor out = s.output(tokens, rows);
        backend->matmul(w, s.tensor(TensorType::F32, tokens, cols, std::as_bytes(std::span(x))), out, &bias);
        reference::Matrix want = reference::matmul(w_stored, rows, cols, {x.begin(), x.end()}, tokens);
        for (size_t i = 0; i < want.size(); ++i) want[i] += b[i % static_cast<size_t>(rows)];
        expect_close(s.read(out), want, rel, name + " matmul");

        const int64_t experts = 3, slots = 300;  // k = 2 of 3 experts for 150 tokens, x per token: grouped
        reference::Matrix we_stored;
        const Tensor we = upload(type, experts * rows, cols, we_stored);
        std::vector<int32_t> ids(static_cast<size_t>(slots));
        for (int64_t i = 0; i < slots; ++i) ids[static_cast<size_t>(i)] = static_cast<int32_t>((i * 7 / 3) % experts);
        for (int64_t t = 0; t < slots / 2; ++t)
            if (ids[2 * t] == ids[2 * t + 1]) ids[2 * t + 1] = (ids[2 * t] + 1) % experts;
        const std::vector<float> xe = random(slots / 2 * cols);
        const Tensor y = s.output(slots, rows);
        backend->matmul_experts(we, experts, s.tensor(TensorType::F32, slots / 2, cols, std::as_bytes(std::span(xe))),
                                s.tensor(TensorType::I32, slots / 2, 2, std::as_bytes(std::span(ids))), y);
        expect_close(s.read(y), reference::matmul_experts(we_stored, rows, cols, ids, xe, false, 2), rel,
                     name + " experts");
    }
}

}  // namespace
