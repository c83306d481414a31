// SPDX-License-Identifier: MIT
// The op suite's cases for gpt-oss's operations on every backend: attention sinks (with and without a sliding
// window, on every attention path of the GPU backends), the clamped SwiGLU at its limits, and per-expert biases.
// (The gated products run swiglu_clamped over every weight type in backend_ops_test.cpp.)
#include "backend/backend_ops_fixture.h"

using namespace ember;
using namespace ember::op_suite;

namespace {

class GptOssOps : public BackendOps {
protected:
    // One sink per head: a dominating one (+8: larger than most scores), a negligible one (-30), and the rest
    // around 0 (comparable to the scores).
    std::vector<float> sinks_for(int n_head) {
        std::vector<float> s = random(static_cast<size_t>(n_head));
        s[0] = 8.0f;
        if (n_head > 1) s[1] = -30.0f;
        return s;
    }
};

std::string case_name(TensorType cache_type, const AttentionParams& p, int64_t n_kv, size_t tokens) {
    return std::string(gguf::traits(cache_type).name) + " cache, " + std::to_string(p.n_head) + "/" +
           std::to_string(p.n_head_kv) + " heads of " + std::to_string(p.head_dim) + ", " + std::to_string(n_kv) +
           " rows, " + std::to_string(tokens) + " tokens, window " + std::to_string(p.window);
}

TEST_P(GptOssOps, AttentionWithSinks) {
    // Each path of the GPU backends, with and without a window: decode steps over a long cache (Vulkan: split into
    // many chunks and combined; HIP/CUDA: slices and their merge), a short cache (Vulkan: one chunk, normalized in
    // the split kernel), prefill batches of 100 and 70 queries (Vulkan: tiled from 32 queries, HIP/CUDA from 64;
    // Q8_0 caches: the split kernels), a head size that is not a multiple of 4 (Vulkan: the plain kernel), and
    // gpt-oss's layout (64 heads over 8, head size 64, window 128). Queries at early positions see few rows, so the
    // sinks weigh most there.
    std::vector<int32_t> scattered = consecutive(0, 70);
    std::shuffle(scattered.begin(), scattered.end(), std::mt19937(5));
    const AttentionCase cases[] = {
        {{4, 1, 64, 0.125f}, 1300, {1299, 1000, 3, 0}, sinks_for(4)},
        {{4, 1, 64, 0.125f, 128}, 1300, {1299, 700, 127, 128, 5}, sinks_for(4)},
        {{4, 2, 32, 0.17f}, 20, {19, 5}, sinks_for(4)},
        {{4, 2, 32, 0.17f, 6}, 20, {19, 5}, sinks_for(4)},
        {{4, 2, 64, 0.125f}, 137, consecutive(37, 100), sinks_for(4)},
        {{4, 2, 64, 0.125f, 40}, 137, consecutive(37, 100), sinks_for(4)},
        {{4, 1, 64, 0.125f, 9}, 70, scattered, sinks_for(4)},
        {{4, 2, 18, 0.24f}, 90, {89, 10, 0}, sinks_for(4)},
        {{4, 2, 18, 0.24f, 9}, 90, {89, 10, 0}, sinks_for(4)},
        {{64, 8, 64, 0.125f, 128}, 300, {299, 150}, sinks_for(64)},
    };
    for (const AttentionCase& c : cases)
        for (TensorType cache_type : {TensorType::F32, TensorType::F16, TensorType::Q8_0}) {
            if (cache_type == TensorType::Q8_0 && c.p.head_dim % 32 != 0) continue;
            // Q8_0 within 1e-4 as in AttentionInASlidingWindow (the rows' rounding summed in another order).
            expect_attention(c, cache_type, cache_type == TensorType::Q8_0 ? 1e-4 : 1e-5,
                             case_name(cache_type, c.p, c.n_kv, c.positions.size()) + ", sinks");
        }
}

TEST_P(GptOssOps, AttentionSinksOfTheWrongShapeAreErrors) {
    const AttentionParams base{4, 2, 32, 0.17f};
    const Tensor k_cache = output(TensorType::F32, 8, 64), v_cache = output(TensorType::F32, 8, 64);
    const std::vector<int32_t> positions = {0};
    backend_->store_kv(upload_f32(1, 64, random(64)), upload_f32(1, 64, random(64)), k_cache, v_cache, positions);
    const Tensor q = upload_f32(1, 128, random(128)), out = output(TensorType::F32, 1, 128);
    const Tensor three = upload_f32(1, 3, random(3)), f16 = upload(TensorType::F16, 1, 4, random(4));
    for (const Tensor* sinks : {&three, &f16}) {
        AttentionParams p = base;
        p.sinks = sinks;
        EXPECT_THROW(backend_->attention(q, k_cache, v_cache, 1, positions, p, out), Error);
    }
}

TEST_P(GptOssOps, SwigluClampedAtItsLimits) {
    // Gates and ups on both sides of +-7 and exactly at them, every pair of them.
    const std::vector<float> values = {-100.0f, -7.5f, -7.0f, -6.5f, -1.0f, 0.0f, 0.3f, 6.99f, 7.0f, 7.01f, 12.0f,
                                       100.0f};
    std::vector<float> g, u;
    for (float a : values)
        for (float b : values) {
            g.push_back(a);
            u.push_back(b);
        }
    const int64_t n = static_cast<int64_t>(g.size());
    const Tensor tg = upload_f32(1, n, g), out = output(TensorType::F32, 1, n);
    backend_->gated_activation(Activation::swiglu_clamped, tg, upload_f32(1, n, u), out);
    expect_close(download(out), reference::gated_activation(Activation::swiglu_clamped, to_double(g), to_double(u)),
                 1e-6, "swiglu_clamped");
}

TEST_P(GptOssOps, AddExpertBiasPerSlot) {
    // Several tokens of k = 2 to 4 slots; experts repeated across tokens and within one, the first and the last
    // among them; rows of 96 and of 2880 (gpt-oss's width, more than one work group or block per row).
    const int64_t experts = 6;
    for (int k : {2, 3, 4})
        for (int64_t cols : {96, 2880}) {
            const int64_t tokens = 5;
            std::vector<int32_t> expert_ids(static_cast<size_t>(tokens * k));
            for (int64_t s = 0; s < tokens * k; ++s)
                expert_ids[static_cast<size_t>(s)] = static_cast<int32_t>((s * 7 + s / 3) % experts);
            expert_ids[0] = 0;
            expert_ids[1] = static_cast<int32_t>(experts - 1);
            expert_ids[static_cast<size_t>(k)] = expert_ids[static_cast<size_t>(k) + 1] = 3;  // twice in one token
            const Tensor ids = output(TensorType::I32, tokens, k);
            backend_->write(ids, std::as_bytes(std::span(expert_ids)));
            const std::vector<float> bias = random(experts * cols), y = random(tokens * k * cols);
            const Tensor out = upload_f32(tokens * k, cols, y);
            backend_->add_expert_bias(upload_f32(experts, cols, bias), ids, out);
            reference::Matrix want(y.size());
            for (int64_t s = 0; s < tokens * k; ++s)
                for (int64_t c = 0; c < cols; ++c)
                    want[s * cols + c] = double{y[s * cols + c]} + bias[expert_ids[static_cast<size_t>(s)] * cols + c];
            expect_close(download(out), want, 1e-7,
                         ("k = " + std::to_string(k) + ", " + std::to_string(cols) + " columns").c_str());
        }
    const Tensor bias = upload_f32(experts, 32, random(experts * 32)), ids = output(TensorType::I32, 2, 2);
    EXPECT_THROW(backend_->add_expert_bias(bias, ids, output(TensorType::F32, 3, 32)), Error);
    EXPECT_THROW(backend_->add_expert_bias(bias, ids, output(TensorType::F32, 4, 16)), Error);
    EXPECT_THROW(backend_->add_expert_bias(bias, output(TensorType::F32, 2, 2), output(TensorType::F32, 4, 32)), Error);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, GptOssOps, ::testing::ValuesIn(kBackends),
                         [](const ::testing::TestParamInfo<BackendCase>& p) { return p.param.name; });

}  // namespace
