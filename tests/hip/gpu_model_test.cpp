// SPDX-License-Identifier: MIT
// Whole models on the HIP/CUDA backend against the CPU backend on the generated fixtures (dense llama/qwen
// families and qwen35moe in every weight type): prompt logits and a run of decode steps agree (float weights to
// rounding, quantized ones within the mean KL bound of the CPU-vs-reference tests), and the same token wins wherever
// the CPU's lead exceeds the difference between the two backends.
// Speculative decoding stays lossless: a verify batch with rollback gives the logits of plain decoding, and
// greedy decoding through MTP drafts and verification emits exactly the tokens of plain greedy decoding.
// Skipped where no such GPU is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>

#include "backend/gpu/gpu_backend.h"
#include "common/fixture_path.h"
#include "common/logit_metrics.h"
#include "model/model.h"

using namespace ember;
using ember::test::fixture_path;

namespace {

using ember::test::max_relative_error;
using ember::test::mean_kl;

bool has_device() {
    for (const DeviceInfo& d : list_devices())
        if (d.backend == EMBER_GPU_BACKEND_NAME) return true;
    return false;
}

struct Loaded {
    gguf::File file;
    std::unique_ptr<Backend> backend;
    std::unique_ptr<Model> model;
};

Loaded load(const std::string& path, bool gpu) {
    gguf::File file = gguf::File::open(fixture_path(path));
    std::unique_ptr<Backend> backend =
        gpu ? std::unique_ptr<Backend>(gpu_backend::make_gpu_backend({})) : make_cpu_backend({2});
    auto model = load_model(file, *backend);
    return {std::move(file), std::move(backend), std::move(model)};
}

StateOptions options(int64_t rollback = 0) {
    StateOptions o;
    o.n_ctx = 128;
    o.kv_type = KvCacheType::f16;
    o.max_rollback = rollback;
    return o;
}

std::vector<float> forward(const Model& m, SequenceState& st, const std::vector<int32_t>& tokens, bool all = false,
                           int64_t rollback = 0, std::vector<float>* hidden = nullptr) {
    std::vector<float> logits;
    ForwardRequest r{tokens, static_cast<int32_t>(st.position()), all};
    r.rollback = rollback;
    r.hidden = hidden;
    r.all_hidden = hidden != nullptr;
    m.forward(st, r, logits);
    return logits;
}

int32_t argmax(std::span<const float> v) {
    return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// The largest logit minus the second largest.
double top_margin(std::span<const float> row) {
    float first = -INFINITY, second = -INFINITY;
    for (float x : row) {
        if (x > first) {
            second = first;
            first = x;
        } else if (x > second) {
            second = x;
        }
    }
    return static_cast<double>(first) - second;
}

double max_difference(std::span<const float> a, std::span<const float> b) {
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
    return worst;
}

const std::vector<int32_t> kPrompt = {260, 72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100};

class GpuModel : public ::testing::TestWithParam<const char*> {
protected:
    void SetUp() override {
        if (!has_device()) GTEST_SKIP() << EMBER_GPU_BACKEND_NAME << ": no device here";
    }
};

TEST_P(GpuModel, LogitsAgreeWithTheCpuBackend) {
    const std::string path = GetParam();
    Loaded cpu = load(path, false), gpu = load(path, true);
    const int64_t v = cpu.model->info().n_vocab;
    std::vector<int32_t> prompt = kPrompt;
    for (int32_t& t : prompt) t %= static_cast<int32_t>(v);
    auto sc = cpu.model->create_state(options()), sg = gpu.model->create_state(options());
    // Float weights agree to rounding. Quantized ones differ by the activation quantization of each backend, so
    // they are held to the mean KL bound of the CPU-vs-reference tests (tests/model/model_logits_test.py).
    const bool float_weights = path.find("f32") != std::string::npos || path.find("f16") != std::string::npos;
    auto expect_close = [&](const std::vector<float>& lg, const std::vector<float>& lc, const std::string& what) {
        if (float_weights) {
            EXPECT_LE(max_relative_error(lg, lc), 2e-3) << what;
        } else {
            EXPECT_LE(mean_kl(lg, lc, v), 1e-3) << what;
        }
    };
    std::vector<float> lc = forward(*cpu.model, *sc, prompt, true);
    std::vector<float> lg = forward(*gpu.model, *sg, prompt, true);
    expect_close(lg, lc, "prompt rows");
    for (int step = 0; step < 8; ++step) {
        const auto cpu_row = std::span<const float>(lc).last(static_cast<size_t>(v));
        const auto gpu_row = std::span<const float>(lg).last(static_cast<size_t>(v));
        const int32_t next = argmax(cpu_row);
        // The same token wins wherever the CPU's lead is more than twice the largest difference of the rows.
        if (top_margin(cpu_row) > 2 * max_difference(gpu_row, cpu_row)) {
            EXPECT_EQ(argmax(gpu_row), next) << "step " << step;
        }
        lc = forward(*cpu.model, *sc, {next});
        lg = forward(*gpu.model, *sg, {next});
        expect_close(lg, lc, "decode step " + std::to_string(step));
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GpuModel,
                         ::testing::Values("dense/llama-f32.gguf", "dense/llama-q8_0.gguf", "dense/qwen2-q4_0.gguf",
                                           "dense/qwen3-f16.gguf", "qwen35moe/qwen35moe-f32.gguf",
                                           "qwen35moe/qwen35moe-q8_0.gguf", "qwen35moe/qwen35moe-q4_0.gguf",
                                           "qwen35moe/qwen35moe-strix.gguf"),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                             std::string s = p.param;
                             std::replace_if(s.begin(), s.end(), [](char c) { return !std::isalnum(c); }, '_');
                             return s;
                         });

class GpuSpeculative : public ::testing::Test {
protected:
    void SetUp() override {
        if (!has_device()) GTEST_SKIP() << EMBER_GPU_BACKEND_NAME << ": no device here";
    }
};

TEST_F(GpuSpeculative, VerifyRowsGiveThePlainDecodingLogits) {
    Loaded l = load("qwen35moe/qwen35moe-q8_0.gguf", true);
    const int64_t v = l.model->info().n_vocab;
    const std::vector<int32_t> draft = {33, 10, 5, 200, 64};
    auto plain = l.model->create_state(options());
    forward(*l.model, *plain, kPrompt);
    std::vector<float> plain_rows;
    for (int32_t t : draft) {
        const std::vector<float> row = forward(*l.model, *plain, {t});
        plain_rows.insert(plain_rows.end(), row.begin(), row.end());
    }
    auto spec = l.model->create_state(options(8));
    forward(*l.model, *spec, kPrompt);
    const std::vector<float> verify = forward(*l.model, *spec, draft, true, static_cast<int64_t>(draft.size()));
    ASSERT_EQ(verify.size(), plain_rows.size());
    EXPECT_LE(max_relative_error(verify, plain_rows), 1e-4);
    for (size_t i = 0; i < draft.size(); ++i)
        EXPECT_EQ(argmax(std::span(verify).subspan(i * v, v)), argmax(std::span(plain_rows).subspan(i * v, v)));
}

// Greedy decoding with MTP drafts of 3 tokens, verified in one batch and rolled back to the accepted prefix, emits
// exactly what plain greedy decoding emits.
TEST_F(GpuSpeculative, MtpDraftingIsLossless) {
    Loaded l = load("qwen35moe/qwen35moe-q8_0.gguf", true);
    const MtpHead* mtp = l.model->mtp();
    ASSERT_NE(mtp, nullptr);
    const size_t v = static_cast<size_t>(l.model->info().n_vocab);
    const size_t e = static_cast<size_t>(l.model->info().n_embd);
    constexpr int kTokens = 16, kDraft = 3;

    auto plain = l.model->create_state(options());
    std::vector<float> logits = forward(*l.model, *plain, kPrompt);
    std::vector<int32_t> want;
    for (int i = 0; i < kTokens; ++i) {
        want.push_back(argmax(logits));
        logits = forward(*l.model, *plain, {want.back()});
    }

    auto st = l.model->create_state(options(kDraft + 1));
    std::vector<float> hidden;
    logits = forward(*l.model, *st, kPrompt, false, 0, &hidden);
    std::vector<int32_t> got = {argmax(logits)};
    std::vector<float> last_hidden(hidden.end() - static_cast<std::ptrdiff_t>(e), hidden.end());
    while (static_cast<int>(got.size()) < kTokens) {
        // Draft: the head predicts the token after `got.back()` from the trunk's hidden state before it.
        std::vector<int32_t> drafted;
        std::vector<float> h = last_hidden, head_logits, head_hidden;
        int32_t t = got.back();
        const int32_t p0 = static_cast<int32_t>(st->position());  // where got.back() goes
        auto head = mtp->create_state(options());  // draft quality does not matter here, only verification
        for (int d = 0; d < kDraft; ++d) {
            mtp->forward(*head, std::span(&t, 1), h, p0 + d, head_logits, head_hidden);
            t = argmax(head_logits);
            drafted.push_back(t);
            h = head_hidden;
        }
        // Verify got.back() and the drafts in one batch.
        std::vector<int32_t> batch = {got.back()};
        batch.insert(batch.end(), drafted.begin(), drafted.end());
        const int64_t base = st->position();
        std::vector<float> rows_hidden;
        const std::vector<float> rows = forward(*l.model, *st, batch, true, static_cast<int64_t>(batch.size()),
                                                &rows_hidden);
        size_t accepted = 0;  // drafts confirmed
        while (accepted < drafted.size() && argmax(std::span(rows).subspan(accepted * v, v)) == drafted[accepted])
            ++accepted;
        for (size_t i = 0; i < accepted; ++i) got.push_back(drafted[i]);
        got.push_back(argmax(std::span(rows).subspan(accepted * v, v)));
        const int64_t keep = base + 1 + static_cast<int64_t>(accepted);
        ASSERT_EQ(st->truncate(keep), keep);
        last_hidden.assign(rows_hidden.begin() + static_cast<std::ptrdiff_t>(accepted * e),
                           rows_hidden.begin() + static_cast<std::ptrdiff_t>((accepted + 1) * e));
    }
    got.resize(kTokens);
    EXPECT_EQ(got, want);
}

}  // namespace
