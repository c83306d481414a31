// SPDX-License-Identifier: MIT
// Whole models on each GPU backend (Vulkan; HIP/CUDA where built) against the CPU backend, loaded the way the app
// loads them (LoadedModel::load with LoadOptions.backend), on the dense fixtures (llama, qwen2, qwen3, qwen3moe,
// gemma3, gpt-oss in F32, F16, Q8_0, Q4_0; gpt-oss also with MXFP4 experts) and the qwen35moe fixtures (F32, F16, Q8_0, Q4_0, ROCmFP4 STRIX). Every position's
// logits of a prompt, once as one batch and once token by token (the decode path, graph replay included), under the
// thresholds of the CPU-vs-reference tests (tests/model/model_logits_test.py, qwen35moe_test.py):
//   F32 weights with an F32 KV cache: max |gpu - cpu| / max |cpu| < 1e-4;
//   other weights (F16 KV cache): mean KL(softmax(cpu) || softmax(gpu)) < 1e-3.
// Each case prints its figures on a "[ figures ]" line.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <ostream>

#include "common/fixture_path.h"
#include "common/logit_metrics.h"
#include "ember/runtime.h"
#include "hip/gpu_test_backends.h"

using namespace ember;
using ember::test::fixture_path;

namespace {

using ember::test::max_relative_error;
using ember::test::mean_kl;

const std::vector<int32_t> kTokens = {267, 116, 104, 101, 32,  259, 257, 32,  99, 97, 116,
                                      268, 10,  3,   200, 255, 0,   65,  66,  67, 262, 263};

struct Case {
    std::string backend;
    std::string fixture;        // relative to the fixture folder
    bool host_experts = false;  // the experts stay on the host and run on the CPU (DevicePolicy::experts_on_host)
};

bool f32_weights(const std::string& fixture) { return fixture.find("-f32") != std::string::npos; }

struct Logits {
    std::vector<float> batch;  // [tokens, n_vocab], the prompt in one append
    std::vector<float> steps;  // the same, one token per append
    int64_t n_vocab = 0;
};

Logits run(const std::string& backend, const std::string& fixture, bool host_experts = false) {
    LoadOptions lo;
    lo.backend = backend;
    lo.threads = 2;
    lo.speculation = SpeculationRequest::off;
    lo.device_policy.experts_on_host = host_experts;
    auto model = LoadedModel::load(fixture_path(fixture), lo);
    if (host_experts) {
        EXPECT_EQ(model->device_choice().placement, Placement::gpu_host_experts) << model->device_choice().reason;
        EXPECT_NE(model->backend().name().find("experts on cpu"), std::string::npos) << model->backend().name();
    }
    SessionOptions so;
    so.n_ctx = 64;
    so.kv_type = f32_weights(fixture) ? KvCacheType::f32 : KvCacheType::f16;
    so.speculate = false;
    Session session(model, so);
    Logits out;
    out.n_vocab = model->info().n_vocab;
    std::vector<int32_t> tokens = kTokens;
    for (int32_t& t : tokens) t %= static_cast<int32_t>(out.n_vocab);
    out.batch = session.append(tokens);
    session.reset();
    for (int32_t t : tokens) {
        const std::vector<float> row = session.append(std::span(&t, 1));
        out.steps.insert(out.steps.end(), row.begin(), row.end());
    }
    return out;
}

class GpuLogits : public ::testing::TestWithParam<Case> {};

TEST_P(GpuLogits, AgreeWithTheCpuBackend) {
    const Case& c = GetParam();
    if (const std::string why = test::gpu_backend_missing(c.backend); !why.empty()) GTEST_SKIP() << why;
    const Logits cpu = run("cpu", c.fixture);
    const Logits gpu = run(c.backend, c.fixture, c.host_experts);
    ASSERT_EQ(gpu.n_vocab, cpu.n_vocab);
    ASSERT_EQ(gpu.batch.size(), cpu.batch.size());
    ASSERT_EQ(gpu.steps.size(), cpu.steps.size());
    const double err_batch = max_relative_error(gpu.batch, cpu.batch);
    const double err_steps = max_relative_error(gpu.steps, cpu.steps);
    const double kl_batch = mean_kl(gpu.batch, cpu.batch, cpu.n_vocab);
    const double kl_steps = mean_kl(gpu.steps, cpu.steps, cpu.n_vocab);
    std::printf("[ figures  ] %s%s %s: max rel error batch %.2e steps %.2e; mean KL batch %.2e steps %.2e\n",
                c.backend.c_str(), c.host_experts ? " (host experts)" : "", c.fixture.c_str(), err_batch, err_steps,
                kl_batch, kl_steps);
    std::fflush(stdout);
    if (f32_weights(c.fixture)) {
        EXPECT_LT(err_batch, 1e-4) << "prompt as one batch";
        EXPECT_LT(err_steps, 1e-4) << "token by token";
    } else {
        EXPECT_LT(kl_batch, 1e-3) << "prompt as one batch";
        EXPECT_LT(kl_steps, 1e-3) << "token by token";
    }
}

// How gtest names a case in its messages.
void PrintTo(const Case& c, std::ostream* os) {
    *os << c.backend << (c.host_experts ? " with host experts " : " ") << c.fixture;
}

std::vector<Case> cases() {
    std::vector<Case> out;
    for (const std::string& backend : test::gpu_backend_names()) {
        for (const char* arch : {"llama", "qwen2", "qwen3", "qwen3moe", "gemma3", "gpt-oss"})
            for (const char* type : {"f32", "f16", "q8_0", "q4_0"})
                out.push_back({backend, std::string("dense/") + arch + "-" + type + ".gguf"});
        out.push_back({backend, "dense/gpt-oss-mxfp4.gguf"});
        for (const char* type : {"f32", "f16", "q8_0", "q4_0", "strix"})
            out.push_back({backend, std::string("qwen35moe/qwen35moe-") + type + ".gguf"});
        // A model larger than the GPU: its experts on the host (CPU products, activations copied each layer).
        for (const char* type : {"f32", "strix"})
            out.push_back({backend, std::string("qwen35moe/qwen35moe-") + type + ".gguf", true});
        out.push_back({backend, "dense/qwen3moe-q4_0.gguf", true});
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GpuLogits, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& p) {
                             return test::case_name(p.param.backend + (p.param.host_experts ? "_host_experts" : ""),
                                                    p.param.fixture);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuLogits);

}  // namespace
