// SPDX-License-Identifier: MIT
// The backend contract: a planted bad argument of each operation is caught by Backend's one check before any
// backend's implementation runs (a backend that counts its calls sees none), with the same message on every
// backend of this build.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backend/backend_ops_fixture.h"
#include "ember/error.h"

namespace ember::op_suite {
namespace {

class PlainBuffer final : public Buffer {
public:
    explicit PlainBuffer(size_t bytes) : bytes_(bytes) {}
    size_t size() const override { return bytes_.size(); }
    std::byte* host() override { return bytes_.data(); }

private:
    std::vector<std::byte> bytes_;
};

// Implements every operation by counting it: whatever reaches an implementation passed the contract.
class CountingBackend final : public Backend {
public:
    int calls = 0;
    std::string name() const override { return "counting"; }
    std::unique_ptr<Buffer> allocate(size_t bytes) override { return std::make_unique<PlainBuffer>(bytes); }
    std::unique_ptr<Buffer> map_weights(std::span<const std::byte> bytes) override { return allocate(bytes.size()); }
    void synchronize() override {}

protected:
    void do_write(const Tensor&, std::span<const std::byte>) override { ++calls; }
    void do_read(const Tensor&, std::span<std::byte>) override { ++calls; }
    void do_get_rows(const Tensor&, std::span<const int32_t>, const Tensor&) override { ++calls; }
    void do_matmul(const Tensor&, const Tensor&, const Tensor&, const Tensor*) override { ++calls; }
    void do_rms_norm(const Tensor&, const Tensor&, float, const Tensor&) override { ++calls; }
    void do_layer_norm(const Tensor&, const Tensor&, const Tensor&, float, const Tensor&) override { ++calls; }
    void do_add(const Tensor&, const Tensor&, const Tensor&) override { ++calls; }
    void do_mul(const Tensor&, const Tensor&, const Tensor&) override { ++calls; }
    void do_scale(const Tensor&, float, const Tensor&) override { ++calls; }
    void do_gated_activation(Activation, const Tensor&, const Tensor&, const Tensor&) override { ++calls; }
    void do_rope(const Tensor&, int, std::span<const int32_t>, const RopeParams&, const Tensor*) override { ++calls; }
    void do_store_kv(const Tensor&, const Tensor&, const Tensor&, const Tensor&, std::span<const int32_t>) override {
        ++calls;
    }
    void do_attention(const Tensor&, const Tensor&, const Tensor&, int64_t, std::span<const int32_t>,
                      const AttentionParams&, const Tensor&) override {
        ++calls;
    }
    void do_softmax(const Tensor&) override { ++calls; }
    void do_unary(UnaryOp, const Tensor&, const Tensor&) override { ++calls; }
    void do_l2_norm(const Tensor&, int, float, const Tensor&) override { ++calls; }
    void do_rms_norm_gated(const Tensor&, const Tensor&, const Tensor&, float, const Tensor&) override { ++calls; }
    void do_conv1d_causal(const Tensor&, const Tensor&, const Tensor&, const Tensor&) override { ++calls; }
    void do_delta_rule(const DeltaRuleArgs&) override { ++calls; }
    void do_moe_route(const Tensor&, int, const Tensor&, const Tensor&) override { ++calls; }
    void do_matmul_experts(const Tensor&, int64_t, const Tensor&, const Tensor&, const Tensor&) override { ++calls; }
    void do_add_expert_bias(const Tensor&, const Tensor&, const Tensor&) override { ++calls; }
    void do_moe_combine(const Tensor&, const Tensor&, const Tensor&) override { ++calls; }
    void do_convert(const Tensor&, const Tensor&) override { ++calls; }
};

// Tensors for one planted call, in buffers of the backend under test (never read: every call must fail its check).
class Arena {
public:
    explicit Arena(Backend& backend) : backend_(backend) {}
    Tensor make(TensorType type, int64_t rows, int64_t cols) {
        buffers_.push_back(backend_.allocate(gguf::row_bytes(type, cols) * static_cast<size_t>(rows)));
        return make_tensor(*buffers_.back(), type, rows, cols);
    }
    Tensor f32(int64_t rows, int64_t cols) { return make(TensorType::F32, rows, cols); }

private:
    Backend& backend_;
    std::vector<std::unique_ptr<Buffer>> buffers_;
};

struct PlantedMistake {
    const char* name;
    std::string message;  // the contract's one line
    std::function<void(Backend&, Arena&)> call;
};

std::vector<PlantedMistake> planted_mistakes() {
    static const int32_t one_position[] = {0};
    static const int32_t far_position[] = {99};
    static const int32_t bad_id[] = {7};
    return {
        {"write of the wrong size", "write: size mismatch",
         [](Backend& b, Arena& a) {
             const std::vector<std::byte> bytes(12);
             b.write(a.f32(2, 2), bytes);
         }},
        {"get_rows past the table", "token id 7 is outside the embedding table (4 rows)",
         [](Backend& b, Arena& a) { b.get_rows(a.f32(4, 32), bad_id, a.f32(1, 32)); }},
        {"matmul of unfit shapes", "matmul: shapes [4x16] x [2x32] -> [2x4] do not fit",
         [](Backend& b, Arena& a) { b.matmul(a.f32(4, 16), a.f32(2, 32), a.f32(2, 4)); }},
        {"matmul with an F16 input", "matmul: input must be f32",
         [](Backend& b, Arena& a) { b.matmul(a.f32(4, 32), a.make(TensorType::F16, 2, 32), a.f32(2, 4)); }},
        {"add of unfit operands", "add: operand shapes differ",
         [](Backend& b, Arena& a) {
             const Tensor x = a.f32(2, 32);
             b.add(x, a.f32(2, 16), x);
         }},
        {"rms_norm with a short weight", "rms_norm: weight length differs from the row length",
         [](Backend& b, Arena& a) {
             const Tensor x = a.f32(2, 32);
             b.rms_norm(x, a.f32(1, 16), 1e-6f, x);
         }},
        {"rope without a position per row", "rope: one position per row",
         [](Backend& b, Arena& a) { b.rope(a.f32(2, 32), 32, one_position, RopeParams{RopeMode::neox, 32}); }},
        {"store_kv past the cache", "store_kv: position 99 is outside the cache (8 rows)",
         [](Backend& b, Arena& a) {
             b.store_kv(a.f32(1, 32), a.f32(1, 32), a.make(TensorType::F16, 8, 32), a.make(TensorType::F16, 8, 32),
                        far_position);
         }},
        {"attention with sinks of the wrong shape", "attention: sinks must be F32 with one value per query head",
         [](Backend& b, Arena& a) {
             const Tensor sinks = a.f32(1, 3);
             AttentionParams p{2, 1, 16, 0.25f};
             p.sinks = &sinks;
             b.attention(a.f32(1, 32), a.make(TensorType::F16, 4, 16), a.make(TensorType::F16, 4, 16), 1,
                         one_position, p, a.f32(1, 32));
         }},
        {"conv1d writing over its input", "conv1d: out must not alias the input",
         [](Backend& b, Arena& a) {
             const Tensor x = a.f32(3, 8);
             b.conv1d_causal(x, a.f32(8, 4), a.f32(3, 8), x);
         }},
        {"delta_rule with a chunk of 65", "delta_rule: chunk size must be 0 to 64",
         [](Backend& b, Arena& a) {
             DeltaRuleArgs d{a.f32(2, 16), a.f32(2, 16), a.f32(2, 16), a.f32(2, 1), a.f32(2, 1), a.f32(1, 256),
                             a.f32(2, 16)};
             d.n_k_heads = d.n_v_heads = 1;
             d.d_k = d.d_v = 16;
             d.chunk_size = 65;
             b.delta_rule(d);
         }},
        {"moe_route of more experts than there are", "moe_route: k must be 1 to the expert count",
         [](Backend& b, Arena& a) {
             b.moe_route(a.f32(2, 4), 5, a.make(TensorType::I32, 2, 5), a.f32(2, 5));
         }},
        {"matmul_gated writing over its input", "matmul_gated: out and up scratch must not alias the input or each other",
         [](Backend& b, Arena& a) {
             const Tensor x = a.f32(2, 32), w = a.f32(32, 32);
             b.matmul_gated(Activation::silu, w, w, x, a.f32(2, 32), x);
         }},
        {"add_expert_bias of the wrong output", "add_expert_bias: output must be [tokens * k, bias cols]",
         [](Backend& b, Arena& a) {
             b.add_expert_bias(a.f32(4, 32), a.make(TensorType::I32, 2, 2), a.f32(3, 32));
         }},
    };
}

TEST(BackendContract, EveryPlantedMistakeStopsBeforeTheImplementation) {
    for (const PlantedMistake& m : planted_mistakes()) {
        CountingBackend backend;
        Arena arena(backend);
        try {
            m.call(backend, arena);
            ADD_FAILURE() << m.name << ": no error";
        } catch (const Error& e) {
            EXPECT_EQ(std::string(e.what()), m.message) << m.name;
        }
        EXPECT_EQ(backend.calls, 0) << m.name << " reached the implementation";
    }
}

class BackendContractOnDevices : public BackendOps {};

// The same mistakes on the backends of this build: the same one line, from the same check.
TEST_P(BackendContractOnDevices, SameMessageEverywhere) {
    for (const PlantedMistake& m : planted_mistakes()) {
        Arena arena(*backend_);
        try {
            m.call(*backend_, arena);
            ADD_FAILURE() << m.name << ": no error";
        } catch (const Error& e) {
            EXPECT_EQ(std::string(e.what()), m.message) << m.name;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(AllBackends, BackendContractOnDevices, ::testing::ValuesIn(kBackends),
                         [](const ::testing::TestParamInfo<BackendCase>& p) { return p.param.name; });

}  // namespace
}  // namespace ember::op_suite
