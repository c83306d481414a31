// SPDX-License-Identifier: MIT
// The op suite's cases for the vision encoder (vision-qwen3vl.md §5) on every backend: LayerNorm, the GELUs,
// the 2-D vision RoPE, bidirectional attention of head size 72, and the encoder's matrix shapes.
#include <map>
#include <tuple>

#include "backend/backend_ops_fixture.h"

using namespace ember;
using namespace ember::op_suite;

namespace {

class VisionOps : public BackendOps {};

// Row-major grid coordinates, rows then columns (RopeMode::vision's positions).
std::vector<int32_t> grid_positions(int g_h, int g_w) {
    std::vector<int32_t> p(static_cast<size_t>(2 * g_h * g_w));
    for (int i = 0; i < g_h * g_w; ++i) {
        p[static_cast<size_t>(i)] = i / g_w;
        p[static_cast<size_t>(g_h * g_w + i)] = i % g_w;
    }
    return p;
}

TEST_P(VisionOps, LayerNormInPlaceAndOut) {
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{5, 1152}, {1, 72}, {33, 4608}, {70000, 8}}) {
        std::vector<float> x = random(static_cast<size_t>(rows * cols), 2.0f);
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) x[static_cast<size_t>(r * cols + c)] += static_cast<float>(r % 7) - 3.0f;
        const std::vector<float> w = random(static_cast<size_t>(cols)), b = random(static_cast<size_t>(cols));
        const reference::Matrix want = reference::layer_norm(to_double(x), cols, to_double(w), to_double(b), 1e-6);
        const Tensor tw = upload_f32(1, cols, w), tb = upload_f32(1, cols, b);
        const Tensor t = upload_f32(rows, cols, x), out = output(TensorType::F32, rows, cols);
        backend_->layer_norm(t, tw, tb, 1e-6f, out);
        expect_close(download(out), want, 2e-5, "layer_norm");
        backend_->layer_norm(t, tw, tb, 1e-6f, t);
        expect_close(download(t), want, 2e-5, "layer_norm in place");
    }
    EXPECT_THROW(backend_->layer_norm(upload_f32(2, 32, random(64)), upload_f32(1, 16, random(16)),
                                      upload_f32(1, 32, random(32)), 1e-6f, output(TensorType::F32, 2, 32)),
                 Error);
}

TEST_P(VisionOps, GeluTanhAndErf) {
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 4304}, {70000, 3}}) {
        const std::vector<float> x = random(static_cast<size_t>(rows * cols), 3.0f);
        for (UnaryOp op : {UnaryOp::gelu_tanh, UnaryOp::gelu_erf}) {
            reference::Matrix want(x.size());
            for (size_t i = 0; i < x.size(); ++i) want[i] = reference::unary(op, x[i]);
            const Tensor t = upload_f32(rows, cols, x), out = output(TensorType::F32, rows, cols);
            backend_->unary(op, t, out);
            expect_close(download(out), want, 2e-6, op == UnaryOp::gelu_tanh ? "gelu_tanh" : "gelu_erf");
            backend_->unary(op, t, t);
            expect_close(download(t), want, 2e-6, "gelu in place");
        }
    }
}

TEST_P(VisionOps, VisionRopeOnSeveralGrids) {
    struct Case {
        int g_h, g_w, heads, head_dim, n_rot;
        float base;
    };
    for (const Case c :
         {Case{1, 1, 16, 72, 72, 10000.0f}, Case{6, 6, 16, 72, 72, 10000.0f}, Case{2, 5, 4, 72, 72, 10000.0f},
          Case{64, 64, 2, 72, 72, 10000.0f}, Case{3, 7, 3, 64, 32, 100.0f}, Case{300, 240, 1, 8, 8, 10000.0f}}) {
        RopeParams p;
        p.mode = RopeMode::vision;
        p.n_rot = c.n_rot;
        p.freq_base = c.base;
        const int64_t rows = int64_t{c.g_h} * c.g_w, cols = int64_t{c.heads} * c.head_dim;
        const std::vector<int32_t> positions = grid_positions(c.g_h, c.g_w);
        const std::vector<float> x = random(static_cast<size_t>(rows * cols));
        const Tensor t = upload_f32(rows, cols, x);
        backend_->rope(t, c.head_dim, positions, p);
        reference::Matrix want = to_double(x);
        reference::rope(want, cols, c.head_dim, positions, p, {});
        expect_close(download(t), want, 2e-5,
                     ("vision rope " + std::to_string(c.g_h) + "x" + std::to_string(c.g_w)).c_str());
    }
    const int32_t one_each[] = {0, 0};
    EXPECT_THROW(backend_->rope(upload_f32(2, 72, random(144)), 72, one_each, RopeParams{RopeMode::vision, 72}), Error);
}

// Every query at n_kv - 1: each sees all keys. The reference is computed once per case for all backends. The
// encoder's 16 heads up to 256 patches; 1024 patches with 2 heads (lavapipe runs the suite in CI: n^2 cost); on
// the HIP/CUDA backend also a 1 MP image's 4096 patches with all 16 heads.
TEST_P(VisionOps, BidirectionalAttentionOfHeadSize72) {
    static std::map<int64_t, reference::Matrix> wants;
    std::vector<int64_t> sizes{1, 37, 256, 1024};
#ifdef EMBER_GPU_BACKEND_NAME
    if (std::string(GetParam().name) == EMBER_GPU_BACKEND_NAME) sizes.push_back(4096);
#endif
    for (int64_t n : sizes) {
        const int heads = n > 256 && n < 4096 ? 2 : 16;
        const AttentionParams p{heads, heads, 72, 1.0f / std::sqrt(72.0f)};
        const int64_t cols = int64_t{heads} * 72;
        const std::vector<float> q = random(static_cast<size_t>(n * cols)), k = random(static_cast<size_t>(n * cols)),
                                 v = random(static_cast<size_t>(n * cols));
        std::vector<int32_t> rows(static_cast<size_t>(n)),
            positions(static_cast<size_t>(n), static_cast<int32_t>(n - 1));
        for (int64_t i = 0; i < n; ++i) rows[static_cast<size_t>(i)] = static_cast<int32_t>(i);
        for (TensorType cache_type : {TensorType::F16, TensorType::F32}) {
            if (cache_type == TensorType::F32 && n > 64) continue;
            const Tensor k_cache = output(cache_type, n, cols), v_cache = output(cache_type, n, cols);
            backend_->store_kv(upload_f32(n, cols, k), upload_f32(n, cols, v), k_cache, v_cache, rows);
            const Tensor out = output(TensorType::F32, n, cols);
            backend_->attention(upload_f32(n, cols, q), k_cache, v_cache, n, positions, p, out);
            const int64_t key = n * 2 + (cache_type == TensorType::F16);
            // Queries are independent: the reference checks every 16th (and the last) of a long batch.
            const int64_t step = n > 1024 ? 64 : n > 64 ? 16 : 1;
            std::vector<int64_t> checked;
            for (int64_t i = 0; i < n; i += step) checked.push_back(i);
            if (checked.back() != n - 1) checked.push_back(n - 1);
            if (!wants.count(key)) {
                reference::Matrix ks, vs, qs;
                upload(cache_type, n, cols, k, &ks);
                upload(cache_type, n, cols, v, &vs);
                for (int64_t i : checked) qs.insert(qs.end(), q.begin() + i * cols, q.begin() + (i + 1) * cols);
                const std::vector<int32_t> some(checked.size(), static_cast<int32_t>(n - 1));
                wants[key] = reference::attention(qs, ks, vs, n, some, p);
            }
            const std::vector<float> all = download(out);
            std::vector<float> got;
            for (int64_t i : checked) got.insert(got.end(), all.begin() + i * cols, all.begin() + (i + 1) * cols);
            expect_close(
                got, wants[key], 1e-5,
                ("bidirectional " + std::to_string(n) + " " + std::string(gguf::traits(cache_type).name)).c_str());
        }
    }
}

// The encoder's products (qkv, output, FFN up/down, merger), with bias, F32 and F16 weights, including output and
// input widths that are not multiples of 32 and many rows.
TEST_P(VisionOps, EncoderMatrixShapes) {
    static std::map<std::tuple<int64_t, int64_t, int64_t, int>, reference::Matrix> wants;
    struct Case {
        int64_t rows, cols, tokens;
        TensorType type;
    };
    for (const Case c : {Case{3456, 1152, 37, TensorType::F16}, Case{4304, 1152, 5, TensorType::F32},
                         Case{1152, 4304, 64, TensorType::F16}, Case{1152, 1536, 1, TensorType::F32},
                         Case{72, 1152, 300, TensorType::F32}, Case{2048, 4608, 3, TensorType::F16},
                         Case{72, 72, 4096, TensorType::F16}, Case{36, 40, 70000, TensorType::F32}}) {
        reference::Matrix w_stored;
        const Tensor w = upload(c.type, c.rows, c.cols, random(static_cast<size_t>(c.rows * c.cols)), &w_stored);
        const std::vector<float> x = random(static_cast<size_t>(c.tokens * c.cols)),
                                 b = random(static_cast<size_t>(c.rows));
        const Tensor bias = upload_f32(1, c.rows, b), out = output(TensorType::F32, c.tokens, c.rows);
        backend_->matmul(w, upload_f32(c.tokens, c.cols, x), out, &bias);
        const auto key = std::tuple{c.rows, c.cols, c.tokens, static_cast<int>(c.type)};
        if (!wants.count(key)) {
            reference::Matrix want = reference::matmul(w_stored, c.rows, c.cols, to_double(x), c.tokens);
            for (size_t i = 0; i < want.size(); ++i) want[i] += b[i % static_cast<size_t>(c.rows)];
            wants[key] = std::move(want);
        }
        expect_close(download(out), wants[key], 1e-5,
                     (std::to_string(c.rows) + "x" + std::to_string(c.cols) + ", " + std::to_string(c.tokens) +
                      " rows, " + std::string(gguf::traits(c.type).name))
                         .c_str());
    }
}

INSTANTIATE_TEST_SUITE_P(AllBackends, VisionOps, ::testing::ValuesIn(kBackends),
                         [](const ::testing::TestParamInfo<BackendCase>& p) { return p.param.name; });

}  // namespace
