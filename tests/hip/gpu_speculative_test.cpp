// SPDX-License-Identifier: MIT
// Speculative decoding stays lossless on each GPU backend (Vulkan; HIP/CUDA where built): models loaded with
// LoadOptions.backend set, greedy Session output with drafting (fixed draft lengths that force rollbacks of every
// size, and the adaptive rule) is token for token that of plain decoding, over 256 tokens on a GPU. Drafters: the
// MTP head of the qwen35moe fixtures (F32 and quantized weights) and embedded DFlash drafts (dense qwen3 and
// qwen35moe targets, and a draft whose every token is accepted). The counterpart of
// tests/runtime/speculative_test.cpp, which runs on the CPU backend.
// On a CPU implementation of Vulkan (lavapipe in CI, a few tokens per second) two of the cases run (MTP with
// quantized weights, and the always-accepted DFlash draft), 16 tokens long; all of them run on a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <ostream>

#include "common/fixture_path.h"
#include "backend/backend.h"
#include "model/model.h"
#include "ember/runtime.h"
#include "hip/gpu_test_backends.h"

using namespace ember;
using ember::test::fixture_path;

namespace {

constexpr int kGpuTokens = 256, kCpuVulkanTokens = 16;
const std::vector<int32_t> kPrompt = {260, 72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100, 33};

struct Case {
    std::string backend;
    std::string fixture;  // relative to the fixture folder
    std::string method;   // the drafter the file must get: "mtp" or "dflash"
    bool on_cpu_vulkan = false;  // also run on a CPU implementation of Vulkan
};

// True when make_backend("vulkan") can only pick a CPU implementation (it prefers any GPU).
bool vulkan_on_cpu_only() {
    bool cpu = false;
    for (const DeviceInfo& d : list_devices()) {
        if (d.backend != "vulkan" || !d.usable) continue;
        if (d.type != "CPU") return false;
        cpu = true;
    }
    return cpu;
}

GenerationResult generate(const std::shared_ptr<LoadedModel>& model, bool speculate, int draft_length,
                          int n_tokens) {
    SessionOptions so;
    so.n_ctx = 512;
    so.speculate = speculate;
    so.draft_length = draft_length;
    Session session(model, so);
    GenerationOptions greedy;
    greedy.max_tokens = n_tokens;
    greedy.ignore_end_of_generation = true;
    return session.generate(kPrompt, greedy);
}

class GpuSpeculative : public ::testing::TestWithParam<Case> {};

TEST_P(GpuSpeculative, GreedyIsTokenForTokenPlainDecoding) {
    const Case& c = GetParam();
    if (const std::string why = test::gpu_backend_missing(c.backend); !why.empty()) GTEST_SKIP() << why;
    LoadOptions lo;
    lo.backend = c.backend;
    lo.threads = 2;
    auto model = LoadedModel::load(fixture_path(c.fixture), lo);
    ASSERT_EQ(speculation_name(model->speculation()), c.method);
    const bool cpu_vulkan = c.backend == "vulkan" && vulkan_on_cpu_only();
    if (cpu_vulkan && !c.on_cpu_vulkan) GTEST_SKIP() << "runs on a GPU only (a CPU Vulkan is too slow for all cases)";
    const int n_tokens = cpu_vulkan ? kCpuVulkanTokens : kGpuTokens;
    const GenerationResult plain = generate(model, false, 0, n_tokens);
    ASSERT_EQ(plain.tokens.size(), static_cast<size_t>(n_tokens));
    for (int length : {1, 7, 0}) {  // fixed lengths: rollbacks of every size up to 7; 0: the adaptive rule
        const GenerationResult spec = generate(model, true, length, n_tokens);
        EXPECT_EQ(speculation_name(spec.stats.speculation), c.method);
        EXPECT_GT(spec.stats.draft_steps, 0) << "draft length " << length;
        size_t first_difference = 0;
        while (first_difference < std::min(spec.tokens.size(), plain.tokens.size()) &&
               spec.tokens[first_difference] == plain.tokens[first_difference])
            ++first_difference;
        EXPECT_EQ(spec.tokens, plain.tokens)
            << "draft length " << length << ": first difference at token " << first_difference;
        std::printf("[ figures  ] %s %s draft length %d: %zu/%zu tokens equal, %lld draft steps, %.0f %% accepted\n",
                    c.backend.c_str(), c.fixture.c_str(), length, first_difference, plain.tokens.size(),
                    static_cast<long long>(spec.stats.draft_steps), 100.0 * spec.stats.acceptance_rate());
        std::fflush(stdout);  // a run stopped by a time limit still shows how far it got
    }
}

// How gtest names a case in its messages.
void PrintTo(const Case& c, std::ostream* os) { *os << c.backend << " " << c.fixture; }

std::vector<Case> cases() {
    std::vector<Case> out;
    for (const std::string& backend : test::gpu_backend_names()) {
        for (const char* type : {"f32", "q8_0", "strix"})
            out.push_back({backend, std::string("qwen35moe/qwen35moe-") + type + ".gguf", "mtp",
                           std::string(type) == "q8_0"});
        // echo-agree: a draft built so that every drafted token is accepted (whole drafts commit)
        for (const char* file : {"qwen3-drafted.gguf", "qwen35moe-drafted.gguf", "echo-agree-drafted.gguf"})
            out.push_back({backend, std::string("dflash/") + file, "dflash",
                           std::string(file) == "echo-agree-drafted.gguf"});
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(Drafters, GpuSpeculative, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& p) {
                             return test::case_name(p.param.backend, p.param.fixture);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuSpeculative);

}  // namespace
