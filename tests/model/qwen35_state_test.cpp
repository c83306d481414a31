// SPDX-License-Identifier: MIT
// qwen35moe's recurrent state: rollback through per-token snapshots gives exactly the logits of an uninterrupted
// run, verify rows equal plain decoding, checkpoints let a second turn reuse a shared prefix, and a decode step
// reads only the chosen experts' weights.
#include <gtest/gtest.h>

#include "common/fixture_path.h"
#include "backend/backend.h"
#include "model/model.h"
#include "ember/runtime.h"

using namespace ember;
using ember::test::fixture_path;

namespace {

struct Loaded {
    gguf::File file;
    std::unique_ptr<Backend> backend;
    std::unique_ptr<Model> model;
};

Loaded load(const char* name) {
    gguf::File file = gguf::File::open(fixture_path("qwen35moe") / name);
    auto backend = make_cpu_backend({2});
    auto model = load_model(file, *backend);
    return {std::move(file), std::move(backend), std::move(model)};
}

std::vector<float> run(const Model& m, SequenceState& st, std::vector<int32_t> tokens, bool all, int64_t rollback = 0) {
    std::vector<float> logits;
    ForwardRequest r{tokens, static_cast<int32_t>(st.position()), all};
    r.rollback = rollback;
    m.forward(st, r, logits);
    return logits;
}

StateOptions options(int64_t rollback = 0) {
    StateOptions o;
    o.n_ctx = 128;
    o.kv_type = KvCacheType::f32;
    o.max_rollback = rollback;
    return o;
}

const std::vector<int32_t> kPrompt = {260, 72, 101, 108, 108, 111, 44, 32, 119, 111, 114};

}  // namespace

TEST(Qwen35State, VerifyRowsEqualPlainDecodingAndRollbackIsExact) {
    Loaded l = load("qwen35moe-q8_0.gguf");
    const int64_t v = l.model->info().n_vocab;
    const std::vector<int32_t> draft = {33, 10, 5, 200, 64};

    // Plain: the prompt, then the drafted tokens one by one, then one more token.
    auto plain = l.model->create_state(options());
    run(*l.model, *plain, kPrompt, false);
    std::vector<float> plain_rows;
    for (int32_t t : draft) {
        const std::vector<float> row = run(*l.model, *plain, {t}, false);
        plain_rows.insert(plain_rows.end(), row.begin(), row.end());
    }

    // Speculative: the same tokens as one verify batch with rollback, then cut back to 2 accepted tokens.
    auto spec = l.model->create_state(options(8));
    run(*l.model, *spec, kPrompt, false);
    const std::vector<float> verify = run(*l.model, *spec, draft, true, static_cast<int64_t>(draft.size()));
    ASSERT_EQ(verify.size(), plain_rows.size());
    for (size_t i = 0; i < verify.size(); ++i) ASSERT_EQ(verify[i], plain_rows[i]) << "row " << i / v;

    const int64_t keep = static_cast<int64_t>(kPrompt.size()) + 2;
    EXPECT_EQ(spec->truncate(keep), keep);
    const std::vector<float> after_rollback = run(*l.model, *spec, {77}, false);

    auto fresh = l.model->create_state(options());
    run(*l.model, *fresh, kPrompt, false);
    run(*l.model, *fresh, {draft[0]}, false);
    run(*l.model, *fresh, {draft[1]}, false);
    EXPECT_EQ(after_rollback, run(*l.model, *fresh, {77}, false));

    // Without a snapshot for the position, truncate falls back to what it can restore (here: nothing).
    EXPECT_EQ(spec->truncate(5), 0);
}

TEST(Qwen35State, SecondTurnRestoresTheCheckpointAtTheEndOfThePrompt) {
    SessionOptions so;
    so.n_ctx = 128;
    auto model = LoadedModel::load(fixture_path("qwen35moe") / "qwen35moe-f32.gguf", {2});
    Session session(model, so);
    GenerationOptions options;
    options.max_tokens = 6;
    options.ignore_end_of_generation = true;
    const GenerationResult first = session.generate(kPrompt, options);
    EXPECT_EQ(first.stats.prefilled_tokens, static_cast<int64_t>(kPrompt.size()));

    // The next prompt shares the first one but not the generated tokens: the state cannot be cut inside the
    // generation, so the checkpoint taken where the prompt ended is restored.
    std::vector<int32_t> second = kPrompt;
    second.insert(second.end(), {1, 2, 3});
    const GenerationResult r = session.generate(second, options);
    EXPECT_EQ(r.stats.reused_tokens, static_cast<int64_t>(kPrompt.size()));
    EXPECT_EQ(r.stats.prefilled_tokens, 3);
    EXPECT_GT(session.memory_bytes(), 0u);
}

TEST(Qwen35State, DecodeReadsOnlyTheChosenExperts) {
    Loaded l = load("qwen35moe-q8_0.gguf");
    auto st = l.model->create_state(options());
    run(*l.model, *st, kPrompt, false);
    const BackendCounters before = l.backend->counters();
    run(*l.model, *st, {42}, false);
    const BackendCounters after = l.backend->counters();
    const gguf::TensorInfo& gate = l.file.tensor("blk.0.ffn_gate_exps.weight");
    const gguf::TensorInfo& down = l.file.tensor("blk.0.ffn_down_exps.weight");
    const int64_t n_expert = gate.shape[2];
    const int64_t used = l.file.get_int("qwen35moe.expert_used_count");
    const int64_t trunk = l.file.get_int("qwen35moe.block_count") - l.file.get_int("qwen35moe.nextn_predict_layers", 0);
    // Per layer: gate, up and down of `used` experts, each expert read once.
    const uint64_t per_layer = static_cast<uint64_t>(used) * (2 * gate.n_bytes + down.n_bytes) / n_expert;
    EXPECT_EQ(after.expert_weight_bytes - before.expert_weight_bytes, per_layer * static_cast<uint64_t>(trunk));
    EXPECT_LT(used, n_expert);
}

TEST(Qwen35State, RollbackBeyondTheLimitIsAnError) {
    Loaded l = load("qwen35moe-f32.gguf");
    auto st = l.model->create_state(options(2));
    run(*l.model, *st, kPrompt, false);
    EXPECT_THROW(run(*l.model, *st, {1, 2, 3}, true, 3), Error);
}
