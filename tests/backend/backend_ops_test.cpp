// SPDX-License-Identifier: MIT
// The op suite: every operation of every backend against the plain reference (reference_ops.cpp). A new backend
// joins by adding its factory to kBackends; the tests stay unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "backend/reference_ops.h"
#include "ember/backend.h"
#include "ember/quant.h"

using namespace ember;
using gguf::TensorType;

namespace {

struct BackendCase {
    const char* name;
    std::function<std::unique_ptr<Backend>()> make;
};

void PrintTo(const BackendCase& c, std::ostream* os) { *os << c.name; }

const BackendCase kBackends[] = {
    {"cpu_1_thread", [] { return make_cpu_backend({1}); }},
    {"cpu_2_threads", [] { return make_cpu_backend({2}); }},
};

class BackendOps : public ::testing::TestWithParam<BackendCase> {
protected:
    void SetUp() override { backend_ = GetParam().make(); }

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

    std::unique_ptr<Backend> backend_;
    std::vector<std::unique_ptr<Buffer>> buffers_;
    std::mt19937 rng_{42};
};

TEST_P(BackendOps, GetRowsOfEveryType) {
    for (const gguf::TypeTraits& t : gguf::known_types()) {
        if (!quant::can_quantize(t.type) || !quant::can_dequantize(t.type) || t.type == TensorType::Q8_K) continue;
        const int64_t cols = 256, rows = 5;
        reference::Matrix stored;
        const Tensor table = upload(t.type, rows, cols, random(rows * cols), &stored);
        const std::vector<int32_t> ids = {3, 0, 3, 4};
        const Tensor out = output(TensorType::F32, 4, cols);
        backend_->get_rows(table, ids, out);
        reference::Matrix want;
        for (int32_t id : ids) want.insert(want.end(), stored.begin() + id * cols, stored.begin() + (id + 1) * cols);
        expect_close(download(out), want, 0.0, std::string(t.name).c_str());
    }
    const int32_t bad[] = {9};
    EXPECT_THROW(backend_->get_rows(upload_f32(2, 32, random(64)), bad, output(TensorType::F32, 1, 32)), Error);
}

TEST_P(BackendOps, MatmulOfEveryWeightType) {
    for (const gguf::TypeTraits& t : gguf::known_types()) {
        if (!quant::can_quantize(t.type) || !quant::can_dequantize(t.type) || t.type == TensorType::Q8_K) continue;
        for (int64_t tokens : {int64_t{1}, int64_t{7}}) {
            const int64_t cols = 512, rows = 33;
            reference::Matrix w_stored;
            const Tensor w = upload(t.type, rows, cols, random(rows * cols), &w_stored);
            const std::vector<float> x = random(tokens * cols);
            const Tensor out = output(TensorType::F32, tokens, rows);
            backend_->matmul(w, upload_f32(tokens, cols, x), out);
            const reference::Matrix want = reference::matmul(w_stored, rows, cols, to_double(x), tokens);
            // Float weights use float activations; block types use 8-bit activations (about 1% per element).
            const double tolerance = t.quantized ? 3e-2 : 1e-5;
            expect_close(download(out), want, tolerance, std::string(t.name).c_str());
        }
    }
}

TEST_P(BackendOps, MatmulWithBias) {
    const int64_t cols = 64, rows = 8;
    const std::vector<float> w = random(rows * cols), x = random(2 * cols), b = random(rows);
    const Tensor bias = upload_f32(1, rows, b);
    const Tensor out = output(TensorType::F32, 2, rows);
    backend_->matmul(upload_f32(rows, cols, w), upload_f32(2, cols, x), out, &bias);
    reference::Matrix want = reference::matmul(to_double(w), rows, cols, to_double(x), 2);
    for (size_t i = 0; i < want.size(); ++i) want[i] += b[i % rows];
    expect_close(download(out), want, 1e-5, "matmul+bias");
}

TEST_P(BackendOps, RmsNormInPlaceAndPerHead) {
    const int64_t rows = 6, cols = 96;
    const std::vector<float> x = random(rows * cols, 3.0f), w = random(cols);
    const Tensor tx = upload_f32(rows, cols, x);
    backend_->rms_norm(tx, upload_f32(1, cols, w), 1e-5f, tx);
    expect_close(download(tx), reference::rms_norm(to_double(x), cols, to_double(w), 1e-5), 1e-6, "rms_norm");

    const std::vector<float> wh = random(32);
    const Tensor heads = upload_f32(rows, cols, x);
    backend_->rms_norm(heads.reshaped(32), upload_f32(1, 32, wh), 1e-6f, heads.reshaped(32));
    expect_close(download(heads), reference::rms_norm(to_double(x), 32, to_double(wh), 1e-6), 1e-6, "per head");
}

TEST_P(BackendOps, ElementwiseWithBroadcast) {
    const int64_t rows = 5, cols = 40;
    const std::vector<float> a = random(rows * cols), b = random(rows * cols), c = random(cols);
    reference::Matrix sum(a.size()), prod(a.size()), bsum(a.size()), scaled(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
        sum[i] = double(a[i]) + b[i];
        prod[i] = double(a[i]) * b[i];
        bsum[i] = double(a[i]) + c[i % cols];
        scaled[i] = double(a[i]) * 0.25;
    }
    const Tensor out = output(TensorType::F32, rows, cols);
    backend_->add(upload_f32(rows, cols, a), upload_f32(rows, cols, b), out);
    expect_close(download(out), sum, 1e-7, "add");
    backend_->mul(upload_f32(rows, cols, a), upload_f32(rows, cols, b), out);
    expect_close(download(out), prod, 1e-7, "mul");
    const Tensor ta = upload_f32(rows, cols, a);
    backend_->add(ta, upload_f32(1, cols, c), ta);
    expect_close(download(ta), bsum, 1e-7, "add broadcast in place");
    backend_->scale(upload_f32(rows, cols, a), 0.25f, out);
    expect_close(download(out), scaled, 1e-7, "scale");
}

TEST_P(BackendOps, GatedActivations) {
    const int64_t rows = 3, cols = 128;
    const std::vector<float> g = random(rows * cols, 3.0f), u = random(rows * cols);
    for (Activation act : {Activation::silu, Activation::gelu}) {
        const Tensor tg = upload_f32(rows, cols, g);
        backend_->gated_activation(act, tg, upload_f32(rows, cols, u), tg);
        expect_close(download(tg), reference::gated_activation(act, to_double(g), to_double(u)), 1e-5,
                     act == Activation::silu ? "swiglu" : "geglu");
    }
}

TEST_P(BackendOps, RopeModesPartialAndScaled) {
    const int head_dim = 64;
    const int64_t cols = 3 * head_dim;
    const std::vector<int32_t> positions = {0, 1, 17, 4095};
    const std::vector<float> factors = {1.0f, 1.5f, 2.0f, 4.0f, 8.0f, 1.0f, 1.0f, 2.0f,
                                        1.0f, 1.0f, 3.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
    struct Case { RopeMode mode; int n_rot; float scale; bool with_factors; };
    for (const Case c : {Case{RopeMode::normal, 64, 1.0f, false}, Case{RopeMode::neox, 64, 1.0f, false},
                         Case{RopeMode::neox, 32, 0.5f, true}, Case{RopeMode::normal, 16, 1.0f, false}}) {
        RopeParams p;
        p.mode = c.mode;
        p.n_rot = c.n_rot;
        p.freq_base = 10000.0f;
        p.freq_scale = c.scale;
        const std::vector<float> x = random(positions.size() * cols);
        const Tensor t = upload_f32(static_cast<int64_t>(positions.size()), cols, x);
        const std::vector<float> f(factors.begin(), factors.begin() + c.n_rot / 2);
        const Tensor tf = upload_f32(1, c.n_rot / 2, f);
        backend_->rope(t, head_dim, positions, p, c.with_factors ? &tf : nullptr);
        reference::Matrix want = to_double(x);
        const reference::Matrix fd = c.with_factors ? to_double(f) : reference::Matrix{};
        reference::rope(want, cols, head_dim, positions, p, fd);
        expect_close(download(t), want, 1e-5, "rope");
    }
}

TEST_P(BackendOps, AttentionOverEveryCacheType) {
    const AttentionParams p{8, 2, 64, 0.125f};
    const int64_t kv_cols = 2 * 64, capacity = 40;
    for (TensorType cache_type : {TensorType::F32, TensorType::F16, TensorType::Q8_0}) {
        const Tensor k_cache = output(cache_type, capacity, kv_cols);
        const Tensor v_cache = output(cache_type, capacity, kv_cols);
        // 30 positions in two batches: a prefill of 27 and a verify-like batch of 3.
        const std::vector<float> k = random(30 * kv_cols), v = random(30 * kv_cols);
        std::vector<int32_t> first(27), second = {27, 28, 29};
        for (int i = 0; i < 27; ++i) first[static_cast<size_t>(i)] = i;
        backend_->store_kv(upload_f32(27, kv_cols, {k.begin(), k.begin() + 27 * kv_cols}),
                           upload_f32(27, kv_cols, {v.begin(), v.begin() + 27 * kv_cols}), k_cache, v_cache, first);
        backend_->store_kv(upload_f32(3, kv_cols, {k.begin() + 27 * kv_cols, k.end()}),
                           upload_f32(3, kv_cols, {v.begin() + 27 * kv_cols, v.end()}), k_cache, v_cache, second);
        const std::vector<float> q = random(3 * 8 * 64);
        const Tensor out = output(TensorType::F32, 3, 8 * 64);
        backend_->attention(upload_f32(3, 8 * 64, q), k_cache, v_cache, 30, second, p, out);

        // The reference sees exactly what the cache stores.
        reference::Matrix k_stored(30 * kv_cols), v_stored(30 * kv_cols);
        for (int64_t j = 0; j < 30; ++j) {
            std::vector<std::byte> row(gguf::row_bytes(cache_type, kv_cols));
            std::vector<float> tmp(static_cast<size_t>(kv_cols));
            quant::quantize_row(cache_type, k.data() + j * kv_cols, row.data(), kv_cols);
            quant::dequantize_row(cache_type, row.data(), tmp.data(), kv_cols);
            std::copy(tmp.begin(), tmp.end(), k_stored.begin() + j * kv_cols);
            quant::quantize_row(cache_type, v.data() + j * kv_cols, row.data(), kv_cols);
            quant::dequantize_row(cache_type, row.data(), tmp.data(), kv_cols);
            std::copy(tmp.begin(), tmp.end(), v_stored.begin() + j * kv_cols);
        }
        const reference::Matrix want = reference::attention(to_double(q), k_stored, v_stored, 30, second, p);
        expect_close(download(out), want, 1e-5, std::string(gguf::traits(cache_type).name).c_str());
    }
}

TEST_P(BackendOps, CausalMaskHidesLaterPositions) {
    const AttentionParams p{2, 1, 32, 1.0f};
    const Tensor k_cache = output(TensorType::F32, 8, 32), v_cache = output(TensorType::F32, 8, 32);
    std::vector<int32_t> pos = {0, 1, 2, 3};
    const std::vector<float> k = random(4 * 32), v = random(4 * 32), q = random(4 * 64);
    backend_->store_kv(upload_f32(4, 32, k), upload_f32(4, 32, v), k_cache, v_cache, pos);
    const Tensor out = output(TensorType::F32, 4, 64);
    backend_->attention(upload_f32(4, 64, q), k_cache, v_cache, 4, pos, p, out);
    const std::vector<float> got = download(out);
    // Position 0 sees only itself: its output is v[0] for both heads.
    for (int i = 0; i < 32; ++i) {
        EXPECT_NEAR(got[static_cast<size_t>(i)], v[static_cast<size_t>(i)], 1e-6);
        EXPECT_NEAR(got[static_cast<size_t>(32 + i)], v[static_cast<size_t>(i)], 1e-6);
    }
}

TEST_P(BackendOps, SoftmaxRows) {
    const std::vector<float> x = random(4 * 1000, 5.0f);
    const Tensor t = upload_f32(4, 1000, x);
    backend_->softmax(t);
    reference::Matrix want = to_double(x);
    reference::softmax(want, 1000);
    expect_close(download(t), want, 1e-5, "softmax");
}

TEST_P(BackendOps, ConvertBetweenTypes) {
    const std::vector<float> x = random(3 * 64);
    for (TensorType to : {TensorType::F16, TensorType::BF16, TensorType::Q8_0}) {
        const Tensor converted = output(to, 3, 64);
        backend_->convert(upload_f32(3, 64, x), converted);
        const Tensor back = output(TensorType::F32, 3, 64);
        backend_->convert(converted, back);
        reference::Matrix stored;
        upload(to, 3, 64, x, &stored);
        expect_close(download(back), stored, 0.0, std::string(gguf::traits(to).name).c_str());
    }
}

TEST_P(BackendOps, ShapeMistakesAreErrors) {
    const Tensor a = upload_f32(2, 32, random(64));
    EXPECT_THROW(backend_->matmul(upload_f32(4, 16, random(64)), a, output(TensorType::F32, 2, 4)), Error);
    EXPECT_THROW(backend_->add(a, upload_f32(2, 16, random(32)), a), Error);
    const int32_t positions[] = {0};
    EXPECT_THROW(backend_->rope(a, 32, positions, RopeParams{RopeMode::neox, 32, 1e4f, 1.0f}), Error);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, BackendOps, ::testing::ValuesIn(kBackends),
                         [](const ::testing::TestParamInfo<BackendCase>& p) { return p.param.name; });

}  // namespace
