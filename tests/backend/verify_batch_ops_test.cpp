// SPDX-License-Identifier: MIT
// Speculation is lossless only if verifying drafted tokens in one batch sees exactly what decoding them one by one
// sees: on every backend, each token's rows of a batched expert product (plain and gated, per token and per slot)
// must equal that token's one-token product bit for bit, for the batch sizes of verification (the GPU backends group
// these slots by expert from a few tokens on, and read each expert once for all of them).
#include "backend/backend_ops_fixture.h"

namespace ember::op_suite {
namespace {

class VerifyBatchOps : public BackendOps {};

// Expert 3 in every token (more than one tile of 8 slots from 9 tokens on), the others spread over the experts.
std::vector<int32_t> verify_ids(int64_t tokens, int k, int64_t experts) {
    std::vector<int32_t> ids(static_cast<size_t>(tokens * k));
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = i % k == 0 ? 3 : static_cast<int32_t>((i * 7 + i / 5) % experts);
    return ids;
}

TEST_P(VerifyBatchOps, ExpertProductsOfABatchEqualOneTokenAtATime) {
    const int64_t experts = 12, rows = 40, cols = 256;
    const int k = 4;
    for (TensorType wt : {TensorType::Q4_0_ROCMFP4, TensorType::Q4_0_ROCMFP4_FAST, TensorType::Q4_0, TensorType::Q8_0,
                          TensorType::F16}) {
        reference::Matrix g_stored;
        const Tensor wg = upload(wt, experts * rows, cols, random(experts * rows * cols), &g_stored);
        const Tensor wu = upload(wt, experts * rows, cols, random(experts * rows * cols));
        for (int64_t tokens : {2, 4, 9, 16, 32}) {
            const std::vector<int32_t> expert_ids = verify_ids(tokens, k, experts);
            const Tensor ids = output(TensorType::I32, tokens, k);
            backend_->write(ids, std::as_bytes(std::span(expert_ids)));
            for (bool gated : {false, true})
                for (bool per_slot : {false, true}) {
                    const int64_t x_rows = per_slot ? tokens * k : tokens, slots = tokens * k;
                    const std::vector<float> x = random(x_rows * cols);
                    const Tensor tx = upload_f32(x_rows, cols, x);
                    const auto product = [&](const Tensor& in, const Tensor& slot_ids, int64_t n_slots) {
                        const Tensor out = output(TensorType::F32, n_slots, rows);
                        if (gated)
                            backend_->matmul_experts_gated(Activation::silu, wg, wu, experts, in, slot_ids,
                                                           output(TensorType::F32, n_slots, rows), out);
                        else
                            backend_->matmul_experts(wg, experts, in, slot_ids, out);
                        return download(out);
                    };
                    const std::vector<float> batch = product(tx, ids, slots);
                    const std::string what = std::string(gguf::traits(wt).name) + ", " + std::to_string(tokens) +
                                             " tokens" + (gated ? ", gated" : "") + (per_slot ? ", per slot" : "");
                    if (!gated)
                        expect_close(batch,
                                     reference::matmul_experts(g_stored, rows, cols, expert_ids, x, per_slot, k),
                                     gguf::traits(wt).quantized ? 3e-2 : 1e-5, what.c_str());
                    for (int64_t token = 0; token < tokens; ++token) {
                        const std::vector<float> single =
                            product(per_slot ? tx.row_range(token * k, k) : tx.row_range(token, 1),
                                    ids.row_range(token, 1), k);
                        ASSERT_TRUE(std::equal(single.begin(), single.end(), batch.begin() + token * k * rows))
                            << what << ": token " << token << " differs from its one-token product";
                    }
                }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, VerifyBatchOps, ::testing::ValuesIn(kBackends),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ember::op_suite
