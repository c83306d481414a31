// SPDX-License-Identifier: MIT
// The CPU backend and the op suite's reference (reference_ops.cpp) against the numpy reference of the vision ops
// (tests/reference/vision_ops_reference.py writes the fixtures): layer_norm, gelu_erf/gelu_tanh, vision RoPE.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "backend/reference_ops.h"
#include "common/fixture_path.h"
#include "backend/backend.h"

using namespace ember;

namespace {

template <typename T>
std::vector<T> load(const std::string& name, size_t n) {
    const auto path = test::fixture_path("vision_ops/" + name + ".f32");
    std::ifstream f(path, std::ios::binary);
    EXPECT_TRUE(f.good()) << path;
    std::vector<T> v(n);
    f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(T)));
    EXPECT_EQ(static_cast<size_t>(f.gcount()), n * sizeof(T)) << path;
    return v;
}

template <typename A, typename B>
double max_error(const A& got, const B& want) {
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(double(got[i]) - double(want[i])));
    return worst;
}

class VisionOpsNumpy : public ::testing::Test {
protected:
    Tensor tensor(int64_t rows, int64_t cols, const std::vector<float>& v) {
        buffers_.push_back(cpu_->allocate(v.size() * 4));
        const Tensor t = make_tensor(*buffers_.back(), gguf::TensorType::F32, rows, cols);
        cpu_->write(t, std::as_bytes(std::span(v)));
        return t;
    }
    std::vector<float> read(const Tensor& t) {
        std::vector<float> v(static_cast<size_t>(t.rows * t.cols));
        cpu_->read(t, std::as_writable_bytes(std::span(v)));
        return v;
    }
    std::unique_ptr<Backend> cpu_ = make_cpu_backend({2});
    std::vector<std::unique_ptr<Buffer>> buffers_;
};

TEST_F(VisionOpsNumpy, LayerNorm) {
    for (auto [name, rows, cols, eps] :
         {std::tuple{"layer_norm_1152", 6, 1152, 1e-6f}, {"layer_norm_72", 3, 72, 1e-5f}}) {
        const std::string n(name);
        const size_t size = static_cast<size_t>(rows * cols);
        const auto x = load<float>(n + ".x", size), w = load<float>(n + ".weight", static_cast<size_t>(cols)),
                   b = load<float>(n + ".bias", static_cast<size_t>(cols)), want = load<float>(n + ".want", size);
        const Tensor t = tensor(rows, cols, x);
        cpu_->layer_norm(t, tensor(1, cols, w), tensor(1, cols, b), eps, t);  // in place
        EXPECT_LE(max_error(read(t), want), 2e-5) << n << " cpu";
        const reference::Matrix wd(w.begin(), w.end()), bd(b.begin(), b.end());
        EXPECT_LE(max_error(reference::layer_norm({x.begin(), x.end()}, cols, wd, bd, eps), want), 1e-5)
            << n << " reference";
    }
}

TEST_F(VisionOpsNumpy, GeluErfAndTanh) {
    const auto x = load<float>("gelu.x", 2048);
    for (auto [op, key] : {std::pair{UnaryOp::gelu_erf, "gelu.erf"}, {UnaryOp::gelu_tanh, "gelu.tanh"}}) {
        const auto want = load<float>(key, 2048);
        const Tensor t = tensor(1, 2048, x);
        cpu_->unary(op, t, t);
        EXPECT_LE(max_error(read(t), want), 5e-6) << key << " cpu";
        std::vector<double> ref(x.size());
        for (size_t i = 0; i < x.size(); ++i) ref[i] = reference::unary(op, x[i]);
        EXPECT_LE(max_error(ref, want), 1e-6) << key << " reference";
    }
}

TEST_F(VisionOpsNumpy, VisionRope) {
    struct Case {
        const char* name;
        int rows, heads, head_dim, n_rot;
        float base, scale;
    };
    for (const Case c : {Case{"rope_vision", 15, 16, 72, 72, 10000.0f, 1.0f},
                         Case{"rope_vision_partial", 8, 2, 32, 16, 100.0f, 0.5f}}) {
        const std::string n(c.name);
        const int64_t cols = int64_t{c.heads} * c.head_dim;
        const size_t size = static_cast<size_t>(c.rows * cols);
        const auto x = load<float>(n + ".x", size), want = load<float>(n + ".want", size);
        const auto positions = load<int32_t>(n + ".positions", static_cast<size_t>(2 * c.rows));
        RopeParams p;
        p.mode = RopeMode::vision;
        p.n_rot = c.n_rot;
        p.freq_base = c.base;
        p.freq_scale = c.scale;
        const Tensor t = tensor(c.rows, cols, x);
        cpu_->rope(t, c.head_dim, positions, p);
        EXPECT_LE(max_error(read(t), want), 2e-5) << n << " cpu";
        reference::Matrix ref(x.begin(), x.end());
        reference::rope(ref, cols, c.head_dim, positions, p, {});
        EXPECT_LE(max_error(ref, want), 1e-5) << n << " reference";
    }
}

}  // namespace
