// SPDX-License-Identifier: MIT
// The op suite's fixture: the backends of this build (kBackends) and the helpers every case uses (upload, output,
// download, expect_close against the reference in reference_ops.h). Test files derive a suite class from
// BackendOps and instantiate it over kBackends.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>

#include "backend/reference_ops.h"
#include "backend/backend.h"
#include "quant/quant.h"

namespace ember::op_suite {

using gguf::TensorType;

struct BackendCase {
    const char* name;
    std::function<std::unique_ptr<Backend>()> make;
};

inline void PrintTo(const BackendCase& c, std::ostream* os) {
    *os << c.name;
}

inline const BackendCase kBackends[] = {
    {"cpu_1_thread", [] { return make_cpu_backend({1}); }},
    {"cpu_2_threads", [] { return make_cpu_backend({2}); }},
#ifdef EMBER_TEST_VULKAN
    {"vulkan", [] { return make_backend("vulkan"); }},
    // The float matrix x vector kernels on a device that has integer dot products (the variable is read once,
    // when the backend is made).
    {"vulkan_float",
     [] {
         setenv("EMBER_VULKAN_NO_INTEGER_DOT", "1", 1);
         auto backend = make_backend("vulkan");
         unsetenv("EMBER_VULKAN_NO_INTEGER_DOT");
         return backend;
     }},
#endif
#ifdef EMBER_GPU_BACKEND_NAME  // the HIP/CUDA backend: skipped where no such GPU is present (CI only compiles it)
    {EMBER_GPU_BACKEND_NAME,
     []() -> std::unique_ptr<Backend> {
         for (const DeviceInfo& d : list_devices())
             if (d.backend == EMBER_GPU_BACKEND_NAME) return make_backend(EMBER_GPU_BACKEND_NAME);
         return nullptr;
     }},
#endif
};

inline const char* activation_name(Activation act) {
    switch (act) {
        case Activation::silu: return "silu";
        case Activation::gelu: return "gelu";
        case Activation::swiglu_clamped: return "swiglu_clamped";
    }
    return "?";
}

inline std::vector<int32_t> consecutive(int32_t first, int64_t count) {  // first, first + 1, ...
    std::vector<int32_t> v(static_cast<size_t>(count));
    for (size_t i = 0; i < v.size(); ++i) v[i] = first + static_cast<int32_t>(i);
    return v;
}

class BackendOps : public ::testing::TestWithParam<BackendCase> {
protected:
    void SetUp() override {
        backend_ = GetParam().make();
        if (!backend_) GTEST_SKIP() << GetParam().name << ": no device here";
    }

    std::vector<float> random(size_t n, float scale = 1.0f) {
        std::normal_distribution<float> d(0.0f, scale);
        std::vector<float> v(n);
        for (float& x : v) x = d(rng_);
        return v;
    }

    // A backend tensor holding `values` converted to `type`; its exact stored values come back in `stored`.
    Tensor upload(TensorType type, int64_t rows, int64_t cols, const std::vector<float>& values,
                  reference::Matrix* stored = nullptr) {
        const size_t stride = gguf::row_bytes(type, cols);
        std::vector<std::byte> bytes(stride * static_cast<size_t>(rows));
        for (int64_t r = 0; r < rows; ++r)
            quant::quantize_row(type, values.data() + r * cols, bytes.data() + r * stride, cols);
        buffers_.push_back(backend_->allocate(bytes.size()));
        Tensor t = make_tensor(*buffers_.back(), type, rows, cols);
        backend_->write(t, bytes);
        if (stored) *stored = reference::dequantize(type, bytes, rows, cols);
        return t;
    }
    Tensor upload_f32(int64_t rows, int64_t cols, const std::vector<float>& values) {
        return upload(TensorType::F32, rows, cols, values);
    }
    Tensor output(TensorType type, int64_t rows, int64_t cols) {
        buffers_.push_back(backend_->allocate(gguf::row_bytes(type, cols) * static_cast<size_t>(rows)));
        return make_tensor(*buffers_.back(), type, rows, cols);
    }
    std::vector<float> download(const Tensor& t) {
        std::vector<float> out(static_cast<size_t>(t.rows * t.cols));
        backend_->read(t, std::as_writable_bytes(std::span(out)));
        return out;
    }

    static reference::Matrix to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

    static void expect_close(const std::vector<float>& got, const reference::Matrix& want, double rel,
                             const char* what) {
        ASSERT_EQ(got.size(), want.size()) << what;
        double scale = 1e-30;
        for (double w : want) scale = std::max(scale, std::abs(w));
        double worst = 0;
        for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
        EXPECT_LE(worst / scale, rel) << what << ": max error " << worst << " against max |value| " << scale;
    }

    // matmul_experts of w (experts x rows rows of `cols`) with x rows per token and with x rows per slot, against
    // the reference for the expert ids of the [tokens, k] tensor ids.
    void expect_expert_products(const Tensor& w, const reference::Matrix& w_stored, int64_t experts, int64_t rows,
                                const Tensor& ids, std::span<const int32_t> id_values, int64_t tokens, int k,
                                double rel, const std::string& what) {
        const int64_t cols = w.cols;
        for (bool per_slot : {false, true}) {
            const int64_t x_rows = per_slot ? tokens * k : tokens;
            const std::vector<float> x = random(x_rows * cols);
            const Tensor y = output(TensorType::F32, tokens * k, rows);
            backend_->matmul_experts(w, experts, upload_f32(x_rows, cols, x), ids, y);
            const reference::Matrix want = reference::matmul_experts(w_stored, rows, cols, id_values, x, per_slot, k);
            expect_close(download(y), want, rel, (what + (per_slot ? " per slot" : " per token")).c_str());
        }
    }

    struct AttentionCase {
        AttentionParams p;  // p.sinks unused: see sinks
        int64_t n_kv;
        std::vector<int32_t> positions;
        std::vector<float> sinks = {};  // one per query head (uploaded as p.sinks), or empty for none
    };

    // attention of random queries over a cache of `cache_type` rows, against the reference on the stored (rounded)
    // rows. Rows past n_kv hold NaN: no kernel may let them into a result. With sinks, the case must also be one
    // that they change (a backend that ignored them would fail): the reference without them differs by > 1e-2.
    void expect_attention(const AttentionCase& c, TensorType cache_type, double rel, const std::string& what) {
        const AttentionParams& p = c.p;
        const int64_t kv_cols = int64_t{p.n_head_kv} * p.head_dim, q_cols = int64_t{p.n_head} * p.head_dim;
        const int64_t tokens = static_cast<int64_t>(c.positions.size());
        const std::vector<float> k = random(c.n_kv * kv_cols), v = random(c.n_kv * kv_cols);
        reference::Matrix k_stored, v_stored;
        upload(cache_type, c.n_kv, kv_cols, k, &k_stored);
        upload(cache_type, c.n_kv, kv_cols, v, &v_stored);
        const Tensor k_cache = output(cache_type, c.n_kv + 7, kv_cols);
        const Tensor v_cache = output(cache_type, c.n_kv + 7, kv_cols);
        const std::vector<float> nan(static_cast<size_t>(7 * kv_cols), std::nanf(""));
        backend_->store_kv(upload_f32(7, kv_cols, nan), upload_f32(7, kv_cols, nan), k_cache, v_cache,
                           consecutive(static_cast<int32_t>(c.n_kv), 7));
        backend_->store_kv(upload_f32(c.n_kv, kv_cols, k), upload_f32(c.n_kv, kv_cols, v), k_cache, v_cache,
                           consecutive(0, c.n_kv));
        const std::vector<float> q = random(tokens * q_cols, 2.0f);  // peaked weights: a misplaced row shows
        const Tensor out = output(TensorType::F32, tokens, q_cols);
        AttentionParams with_sinks = p;
        Tensor sinks;
        if (!c.sinks.empty()) {
            sinks = upload_f32(1, p.n_head, c.sinks);
            with_sinks.sinks = &sinks;
        }
        backend_->attention(upload_f32(tokens, q_cols, q), k_cache, v_cache, c.n_kv, c.positions, with_sinks, out);
        const reference::Matrix want =
            reference::attention(to_double(q), k_stored, v_stored, c.n_kv, c.positions, p, to_double(c.sinks));
        expect_close(download(out), want, rel, what.c_str());
        if (!c.sinks.empty()) {
            const reference::Matrix without =
                reference::attention(to_double(q), k_stored, v_stored, c.n_kv, c.positions, p);
            double scale = 1e-30, change = 0;
            for (size_t i = 0; i < want.size(); ++i) {
                scale = std::max(scale, std::abs(want[i]));
                change = std::max(change, std::abs(want[i] - without[i]));
            }
            EXPECT_GT(change / scale, 1e-2) << what << ": the sinks hardly change this case";
        }
    }

    std::unique_ptr<Backend> backend_;
    std::vector<std::unique_ptr<Buffer>> buffers_;
    std::mt19937 rng_{42};
};

}  // namespace ember::op_suite
