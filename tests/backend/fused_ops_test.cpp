// SPDX-License-Identifier: MIT
// The op suite's cases for the fused operations on every backend: each against the reference, and each bit for bit
// equal to the plain operations it stands for on the same backend (so that a decode step, which a GPU backend runs
// fused, and a verify batch, which may take the composed path, round alike).
#include <cmath>
#include <cstring>

#include "backend/backend_ops_fixture.h"

using namespace ember;
using namespace ember::op_suite;

namespace {

class FusedOps : public BackendOps {
protected:
    void expect_identical(const std::vector<float>& fused, const std::vector<float>& parts, const std::string& what) {
        ASSERT_EQ(fused.size(), parts.size()) << what;
        size_t differ = 0, first = 0;
        for (size_t i = 0; i < fused.size(); ++i)
            if (std::memcmp(&fused[i], &parts[i], sizeof(float)) != 0 && differ++ == 0) first = i;
        EXPECT_EQ(differ, 0u) << what << ": " << differ << " values differ from the plain operations', first at "
                              << first << " (" << fused[first] << " vs " << parts[first] << ")";
    }
    // I32 [tokens, k] of experts drawn uniformly from [0, experts).
    Tensor random_ids(int64_t tokens, int k, int64_t experts) {
        std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(experts - 1));
        std::vector<int32_t> expert_ids(static_cast<size_t>(tokens * k));
        for (int32_t& e : expert_ids) e = pick(rng_);
        const Tensor ids = output(TensorType::I32, tokens, k);
        backend_->write(ids, std::as_bytes(std::span(expert_ids)));
        return ids;
    }
};

TEST_P(FusedOps, AddRmsNorm) {
    // 300 columns: more than one pass of a GPU block's threads over the row.
    for (int64_t cols : {96, 300}) {
        const int64_t rows = 5;
        const std::vector<float> x = random(rows * cols, 2.0f), y = random(rows * cols), w = random(cols);
        const Tensor tx = upload_f32(rows, cols, x), weight = upload_f32(1, cols, w);
        const Tensor out = output(TensorType::F32, rows, cols);
        backend_->add_rms_norm(tx, upload_f32(rows, cols, y), weight, 1e-6f, out);
        reference::Matrix sum(x.size());
        for (size_t i = 0; i < x.size(); ++i) sum[i] = static_cast<float>(x[i] + y[i]);
        expect_close(download(tx), sum, 1e-7, "add_rms_norm residual");
        expect_close(download(out), reference::rms_norm(sum, cols, to_double(w), 1e-6), 1e-6, "add_rms_norm");

        const Tensor px = upload_f32(rows, cols, x), pout = output(TensorType::F32, rows, cols);
        backend_->add(px, upload_f32(rows, cols, y), px);
        backend_->rms_norm(px, weight, 1e-6f, pout);
        expect_identical(download(out), download(pout), "add_rms_norm against add + rms_norm");
    }
    const Tensor x = upload_f32(2, 32, random(64));
    EXPECT_THROW(backend_->add_rms_norm(x, upload_f32(2, 32, random(64)), upload_f32(1, 32, random(32)), 1e-6f, x),
                 Error);
    EXPECT_THROW(backend_->add_rms_norm(x, upload_f32(2, 32, random(64)), upload_f32(1, 31, random(31)), 1e-6f,
                                       output(TensorType::F32, 2, 32)),
                 Error);
}

TEST_P(FusedOps, ConvSiluCarriesItsState) {
    const int64_t channels = 200, kernel = 4;  // 200: a partial block of channels on the GPU
    const std::vector<float> w = random(channels * kernel);
    const Tensor weight = upload_f32(channels, kernel, w);
    const Tensor state = upload_f32(kernel - 1, channels, std::vector<float>((kernel - 1) * channels, 0.0f));
    const Tensor plain_state = upload_f32(kernel - 1, channels, std::vector<float>((kernel - 1) * channels, 0.0f));
    reference::Matrix ref_state((kernel - 1) * channels, 0.0);
    // one token (decode: a GPU kernel that writes the state itself), 1 again, 5, 2, then 40 (prefill, in chunks)
    for (int64_t n : {1, 1, 5, 2, 40}) {
        const std::vector<float> x = random(n * channels);
        const Tensor out = output(TensorType::F32, n, channels), plain = output(TensorType::F32, n, channels);
        backend_->conv1d_causal_silu(upload_f32(n, channels, x), weight, state, out);
        reference::Matrix want = reference::conv1d_causal(to_double(x), channels, to_double(w), kernel, ref_state);
        for (double& v : want) v = reference::unary(UnaryOp::silu, v);
        const std::string what = std::to_string(n) + " tokens";
        expect_close(download(out), want, 1e-6, ("conv1d_silu, " + what).c_str());
        expect_close(download(state), ref_state, 1e-7, ("conv1d_silu state, " + what).c_str());

        backend_->conv1d_causal(upload_f32(n, channels, x), weight, plain_state, plain);
        backend_->unary(UnaryOp::silu, plain, plain);
        expect_identical(download(out), download(plain), "conv1d_silu against conv1d + silu, " + what);
        expect_identical(download(state), download(plain_state), "conv1d_silu state, " + what);
    }
}

TEST_P(FusedOps, DeltaNetGates) {
    const int64_t tokens = 7, heads = 48;
    std::vector<float> beta = random(tokens * heads, 3.0f), alpha = random(tokens * heads, 8.0f);
    alpha[3] = 30.0f;  // softplus's linear branch
    const std::vector<float> dt = random(heads), a = random(heads);
    const Tensor tb = upload_f32(tokens, heads, beta), ta = upload_f32(tokens, heads, alpha);
    const Tensor tdt = upload_f32(1, heads, dt), t_a = upload_f32(1, heads, a);
    backend_->deltanet_gates(tb, ta, tdt, t_a);
    reference::Matrix want_beta(beta.size()), want_g(alpha.size());
    for (size_t i = 0; i < beta.size(); ++i) {
        want_beta[i] = reference::unary(UnaryOp::sigmoid, beta[i]);
        want_g[i] = reference::unary(UnaryOp::softplus, double(alpha[i]) + dt[i % heads]) * a[i % heads];
    }
    expect_close(download(tb), want_beta, 1e-6, "deltanet_gates beta");
    expect_close(download(ta), want_g, 1e-6, "deltanet_gates g");

    const Tensor pb = upload_f32(tokens, heads, beta), pa = upload_f32(tokens, heads, alpha);
    backend_->unary(UnaryOp::sigmoid, pb, pb);
    backend_->add(pa, tdt, pa);
    backend_->unary(UnaryOp::softplus, pa, pa);
    backend_->mul(pa, t_a, pa);
    expect_identical(download(tb), download(pb), "deltanet_gates beta against sigmoid");
    expect_identical(download(ta), download(pa), "deltanet_gates g against add + softplus + mul");
    EXPECT_THROW(backend_->deltanet_gates(tb, ta, upload_f32(1, heads - 1, random(heads - 1)), t_a), Error);
}

TEST_P(FusedOps, MoeCombineWithASharedExpert) {
    const int64_t tokens = 5, cols = 300;
    const int k = 3;
    const std::vector<float> y = random(tokens * k * cols), w = random(tokens * k), shared = random(tokens * cols),
                             gate = random(tokens, 3.0f);
    const Tensor ty = upload_f32(tokens * k, cols, y), tw = upload_f32(tokens, k, w);
    const Tensor out = output(TensorType::F32, tokens, cols);
    backend_->moe_combine_shared(ty, tw, upload_f32(tokens, cols, shared), upload_f32(tokens, 1, gate), out);
    reference::Matrix want(static_cast<size_t>(tokens * cols), 0.0);
    for (int64_t t = 0; t < tokens; ++t)
        for (int64_t c = 0; c < cols; ++c) {
            double sum = reference::unary(UnaryOp::sigmoid, gate[t]) * shared[t * cols + c];
            for (int j = 0; j < k; ++j) sum += double(w[t * k + j]) * y[(t * k + j) * cols + c];
            want[t * cols + c] = sum;
        }
    expect_close(download(out), want, 1e-6, "moe_combine_shared");

    const Tensor plain = output(TensorType::F32, tokens, cols), ts = upload_f32(tokens, cols, shared),
                 tg = upload_f32(tokens, 1, gate);
    backend_->moe_combine(ty, tw, plain);
    backend_->unary(UnaryOp::sigmoid, tg, tg);
    backend_->mul(ts, tg, ts);
    backend_->add(plain, ts, plain);
    expect_identical(download(out), download(plain), "moe_combine_shared against combine + sigmoid + mul + add");
    const Tensor s = upload_f32(tokens, cols, shared);
    EXPECT_THROW(backend_->moe_combine_shared(ty, tw, s, upload_f32(tokens, 1, gate), s), Error);
    EXPECT_THROW(backend_->moe_combine_shared(ty, tw, s, upload_f32(tokens, 2, random(2 * tokens)), out), Error);
}

// The gated products of the decode types against their composition (two products and gated_activation), for
// decode, verify and the runs a verify batch splits into.
TEST_P(FusedOps, GatedProductsRoundAsTheirParts) {
    const int64_t rows = 70, cols = 256, experts = 4;
    const int k = 2;
    for (TensorType wt : {TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_0_ROCMFP4,
                          TensorType::Q4_0_ROCMFP4_FAST}) {
        const std::string type(gguf::traits(wt).name);
        const Tensor wg = upload(wt, rows, cols, random(rows * cols)), wu = upload(wt, rows, cols, random(rows * cols));
        const Tensor eg = upload(wt, experts * rows, cols, random(experts * rows * cols));
        const Tensor eu = upload(wt, experts * rows, cols, random(experts * rows * cols));
        for (int64_t tokens : {1, 5, 13}) {
            const Tensor x = upload_f32(tokens, cols, random(tokens * cols));
            const Tensor out = output(TensorType::F32, tokens, rows), up = output(TensorType::F32, tokens, rows);
            const Tensor plain = output(TensorType::F32, tokens, rows);
            backend_->matmul_gated(Activation::silu, wg, wu, x, up, out);
            backend_->matmul(wg, x, plain);
            backend_->matmul(wu, x, up);
            backend_->gated_activation(Activation::silu, plain, up, plain);
            expect_identical(download(out), download(plain), type + ", " + std::to_string(tokens) + " tokens");

            const Tensor ids = random_ids(tokens, k, experts);
            const Tensor eout = output(TensorType::F32, tokens * k, rows), eup = output(TensorType::F32, tokens * k, rows);
            const Tensor eplain = output(TensorType::F32, tokens * k, rows);
            backend_->matmul_experts_gated(Activation::silu, eg, eu, experts, x, ids, eup, eout);
            backend_->matmul_experts(eg, experts, x, ids, eplain);
            backend_->matmul_experts(eu, experts, x, ids, eup);
            backend_->gated_activation(Activation::silu, eplain, eup, eplain);
            expect_identical(download(eout), download(eplain),
                             type + " experts, " + std::to_string(tokens) + " tokens");
        }
    }
}

// A product and the residual norm after it in one call against matmul and add_rms_norm: the decode types (which a
// GPU joins up to its mat x vec's token count), F32 (composed), rows of 8 and 64 blocks, and token counts of one
// launch and of several (20) and past the mat x vec (40).
TEST_P(FusedOps, MatmulAddRmsNormRoundsAsItsParts) {
    const int64_t rows = 300;
    for (TensorType wt : {TensorType::Q8_0, TensorType::Q4_0_ROCMFP4, TensorType::Q4_0_ROCMFP4_FAST, TensorType::F32}) {
        for (int64_t cols : {256, 2048}) {
            const std::string type = std::string(gguf::traits(wt).name) + " cols " + std::to_string(cols);
            const Tensor w = upload(wt, rows, cols, random(rows * cols));
            const Tensor norm = upload_f32(1, rows, random(rows));
            for (int64_t tokens : {1, 5, 20, 40}) {
                const std::string what = type + ", " + std::to_string(tokens) + " tokens";
                const Tensor x = upload_f32(tokens, cols, random(tokens * cols));
                const std::vector<float> residual = random(tokens * rows, 2.0f);
                const Tensor out = output(TensorType::F32, tokens, rows), r = upload_f32(tokens, rows, residual);
                const Tensor norm_out = output(TensorType::F32, tokens, rows);
                backend_->matmul_add_rms_norm(w, x, out, nullptr, r, norm, 1e-6f, norm_out);

                const Tensor pout = output(TensorType::F32, tokens, rows), pr = upload_f32(tokens, rows, residual);
                const Tensor pnorm = output(TensorType::F32, tokens, rows);
                backend_->matmul(w, x, pout);
                backend_->add_rms_norm(pr, pout, norm, 1e-6f, pnorm);
                expect_identical(download(out), download(pout), what + ", product");
                expect_identical(download(r), download(pr), what + ", residual");
                expect_identical(download(norm_out), download(pnorm), what + ", norm output");
            }
        }
    }
    const Tensor w = upload(TensorType::Q8_0, 64, 64, random(64 * 64)), x = upload_f32(2, 64, random(128));
    const Tensor out = output(TensorType::F32, 2, 64), r = upload_f32(2, 64, random(128));
    const Tensor norm = upload_f32(1, 64, random(64));
    EXPECT_THROW(backend_->matmul_add_rms_norm(w, x, out, nullptr, r, norm, 1e-6f, out), Error);  // norm_out aliases
    EXPECT_THROW(backend_->matmul_add_rms_norm(w, x, out, nullptr, upload_f32(2, 63, random(126)), norm, 1e-6f,
                                               output(TensorType::F32, 2, 64)),
                 Error);  // the residual's shape differs from the product's
}

// The router, its route and the shared expert's gate in one call against matmul_many and moe_route: expert counts
// of one and of several warps' width, token counts of one launch and of several (20), with and without a bias and a
// shared expert's gate.
TEST_P(FusedOps, MoeRouterRoutesAsItsParts) {
    const int64_t cols = 96;
    for (int64_t experts : {8, 70, 256}) {
        const int k = experts == 8 ? 2 : 8;
        const Tensor router = upload_f32(experts, cols, random(experts * cols));
        const Tensor bias = upload_f32(1, experts, random(experts));
        const Tensor gate_w = upload_f32(1, cols, random(cols));
        for (int64_t tokens : {1, 5, 13, 20}) {
            for (bool extras : {false, true}) {
                const std::string what = std::to_string(experts) + " experts, " + std::to_string(tokens) + " tokens" +
                                         (extras ? ", bias and shared gate" : "");
                const Tensor x = upload_f32(tokens, cols, random(tokens * cols, 2.0f));
                MoeRouterArgs a{x,
                                &router,
                                extras ? &bias : nullptr,
                                output(TensorType::F32, tokens, experts),
                                k,
                                output(TensorType::I32, tokens, k),
                                output(TensorType::F32, tokens, k)};
                if (extras) {
                    a.shared_gate_weight = &gate_w;
                    a.shared_gate = output(TensorType::F32, tokens, 1);
                }
                backend_->moe_router(a);

                const Tensor logits = output(TensorType::F32, tokens, experts),
                             ids = output(TensorType::I32, tokens, k);
                const Tensor weights = output(TensorType::F32, tokens, k), gate = output(TensorType::F32, tokens, 1);
                const Product products[] = {{&router, logits, extras ? &bias : nullptr}, {&gate_w, gate}};
                backend_->matmul_many(x, std::span(products, extras ? 2 : 1));
                backend_->moe_route(logits, k, ids, weights);
                expect_identical(download(a.logits), download(logits), what + ", logits");
                expect_identical(download(a.weights), download(weights), what + ", weights");
                std::vector<int32_t> got(static_cast<size_t>(tokens * k)), want(got.size());
                backend_->read(a.ids, std::as_writable_bytes(std::span(got)));
                backend_->read(ids, std::as_writable_bytes(std::span(want)));
                EXPECT_EQ(got, want) << what << ", ids";
                if (extras) expect_identical(download(a.shared_gate), download(gate), what + ", shared gate");
            }
        }
    }
    const Tensor router = upload_f32(8, cols, random(8 * cols)), x = upload_f32(2, cols, random(2 * cols));
    MoeRouterArgs a{x,
                    &router,
                    nullptr,
                    output(TensorType::F32, 2, 8),
                    2,
                    output(TensorType::I32, 2, 2),
                    output(TensorType::F32, 2, 2)};
    MoeRouterArgs bad = a;
    bad.k = 9;
    EXPECT_THROW(backend_->moe_router(bad), Error);  // more experts per token than experts
    bad = a;
    bad.weights = bad.logits;
    EXPECT_THROW(backend_->moe_router(bad), Error);  // weights alias the logits
    bad = a;
    bad.router = nullptr;
    EXPECT_THROW(backend_->moe_router(bad), Error);
}

// The routed and the shared experts' gated products in one call against matmul_experts_gated and matmul_gated, for
// the decode types, a shared expert as wide as a routed one and a wider one, and token counts a GPU joins (1, 5, 8)
// and composes (13).
TEST_P(FusedOps, MoeGateUpRoundsAsItsParts) {
    const int64_t rows = 70, cols = 256, experts = 4;
    const int k = 2;
    for (TensorType wt :
         {TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_0_ROCMFP4, TensorType::Q4_0_ROCMFP4_FAST}) {
        const Tensor eg = upload(wt, experts * rows, cols, random(experts * rows * cols));
        const Tensor eu = upload(wt, experts * rows, cols, random(experts * rows * cols));
        for (int64_t shared_rows : {rows, 2 * rows + 3}) {
            const std::string type =
                std::string(gguf::traits(wt).name) + ", shared rows " + std::to_string(shared_rows);
            const Tensor sg = upload(wt, shared_rows, cols, random(shared_rows * cols));
            const Tensor su = upload(wt, shared_rows, cols, random(shared_rows * cols));
            for (int64_t tokens : {1, 5, 8, 13}) {
                const Tensor ids = random_ids(tokens, k, experts);
                const Tensor x = upload_f32(tokens, cols, random(tokens * cols));
                MoeGateUpArgs a{Activation::silu,
                                &eg,
                                &eu,
                                experts,
                                x,
                                ids,
                                output(TensorType::F32, tokens * k, rows),
                                output(TensorType::F32, tokens * k, rows),
                                &sg,
                                &su,
                                output(TensorType::F32, tokens, shared_rows),
                                output(TensorType::F32, tokens, shared_rows)};
                backend_->moe_gate_up(a);

                const Tensor out = output(TensorType::F32, tokens * k, rows),
                             up = output(TensorType::F32, tokens * k, rows);
                const Tensor sout = output(TensorType::F32, tokens, shared_rows);
                const Tensor sup = output(TensorType::F32, tokens, shared_rows);
                backend_->matmul_experts_gated(Activation::silu, eg, eu, experts, x, ids, up, out);
                backend_->matmul_gated(Activation::silu, sg, su, x, sup, sout);
                const std::string what = type + ", " + std::to_string(tokens) + " tokens";
                expect_identical(download(a.out), download(out), what + ", routed");
                expect_identical(download(a.shared_out), download(sout), what + ", shared");
            }
        }
    }
    const Tensor w = upload(TensorType::Q8_0, experts * rows, 64, random(experts * rows * 64));
    const Tensor sw = upload(TensorType::Q8_0, rows, 64, random(rows * 64));
    const Tensor ids = output(TensorType::I32, 2, k);
    MoeGateUpArgs a{Activation::silu,
                    &w,
                    &w,
                    experts,
                    upload_f32(2, 64, random(128)),
                    ids,
                    output(TensorType::F32, 2 * k, rows),
                    output(TensorType::F32, 2 * k, rows),
                    &sw,
                    &sw,
                    output(TensorType::F32, 2, rows),
                    output(TensorType::F32, 2, rows)};
    MoeGateUpArgs bad = a;
    bad.shared_out = bad.out;
    EXPECT_THROW(backend_->moe_gate_up(bad), Error);  // the routed and the shared outputs alias
    bad = a;
    bad.shared_up = nullptr;
    EXPECT_THROW(backend_->moe_gate_up(bad), Error);
    bad = a;
    bad.shared_out = output(TensorType::F32, 2, rows + 1);
    EXPECT_THROW(backend_->moe_gate_up(bad), Error);  // the shared output's width is not its rows
}

// The end of a mixture-of-experts block against its composition (matmul_experts, matmul, moe_combine_shared or
// moe_combine, then add_rms_norm) for the decode types, with and without a shared expert and the residual norm, rows of
// 8 and 32 blocks, and token counts a GPU fuses (1, 5, 8) and composes (13).
TEST_P(FusedOps, MoeDownCombineRoundsAsItsParts) {
    const int64_t rows = 70, experts = 4;
    const int k = 3;
    for (TensorType wt : {TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_0_ROCMFP4,
                          TensorType::Q4_0_ROCMFP4_FAST}) {
        for (int64_t ffn : {256, 1024}) {
            const std::string type = std::string(gguf::traits(wt).name) + " ffn " + std::to_string(ffn);
            const Tensor down = upload(wt, experts * rows, ffn, random(experts * rows * ffn));
            const Tensor shared_down = upload(wt, rows, ffn, random(rows * ffn));
            const Tensor norm = upload_f32(1, rows, random(rows));
            for (int64_t tokens : {1, 5, 8, 13}) {
                const Tensor ids = random_ids(tokens, k, experts);
                const Tensor act = upload_f32(tokens * k, ffn, random(tokens * k * ffn, 0.5f));
                const Tensor weights = upload_f32(tokens, k, random(tokens * k));
                const Tensor shared_act = upload_f32(tokens, ffn, random(tokens * ffn, 0.5f));
                const std::vector<float> gate = random(tokens, 3.0f);
                const std::vector<float> residual = random(tokens * rows, 2.0f);
                for (int variant = 0; variant < 3; ++variant) {  // plain, a shared expert, and the residual norm too
                    const bool with_shared = variant > 0, with_norm = variant == 2;
                    MoeDownArgs a{&down, experts, act, ids, weights, output(TensorType::F32, tokens * k, rows)};
                    if (with_shared) {
                        a.shared_down = &shared_down;
                        a.shared_act = shared_act;
                        a.shared_gate = upload_f32(tokens, 1, gate);
                        a.shared_out = output(TensorType::F32, tokens, rows);
                    }
                    a.out = output(TensorType::F32, tokens, rows);
                    if (with_norm) {
                        a.norm = &norm;
                        a.residual = upload_f32(tokens, rows, residual);
                        a.norm_eps = 1e-6f;
                        a.norm_out = output(TensorType::F32, tokens, rows);
                    }
                    backend_->moe_down_combine(a);

                    const Tensor y = output(TensorType::F32, tokens * k, rows), plain = output(TensorType::F32, tokens, rows);
                    backend_->matmul_experts(down, experts, act, ids, y);
                    if (with_shared) {
                        const Tensor so = output(TensorType::F32, tokens, rows);
                        backend_->matmul(shared_down, shared_act, so);
                        backend_->moe_combine_shared(y, weights, so, upload_f32(tokens, 1, gate), plain);
                    } else {
                        backend_->moe_combine(y, weights, plain);
                    }
                    const std::string what = type + ", " + std::to_string(tokens) + " tokens" +
                                             (with_shared ? ", shared expert" : "") + (with_norm ? ", norm" : "");
                    expect_identical(download(a.out), download(plain), what);
                    if (!with_norm) continue;
                    const Tensor px = upload_f32(tokens, rows, residual), pnorm = output(TensorType::F32, tokens, rows);
                    backend_->add_rms_norm(px, plain, norm, 1e-6f, pnorm);
                    expect_identical(download(a.residual), download(px), what + ", residual");
                    expect_identical(download(a.norm_out), download(pnorm), what + ", norm output");
                }
            }
        }
    }
    const Tensor down = upload(TensorType::Q8_0, experts * rows, 64, random(experts * rows * 64));
    const Tensor ids = output(TensorType::I32, 2, k);
    MoeDownArgs a{&down, experts, upload_f32(2 * k, 64, random(2 * k * 64)), ids, upload_f32(2, k, random(2 * k)),
                  output(TensorType::F32, 2 * k, rows)};
    a.out = a.act;
    EXPECT_THROW(backend_->moe_down_combine(a), Error);  // out aliases the activations
    a.out = output(TensorType::F32, 2, rows + 1);
    EXPECT_THROW(backend_->moe_down_combine(a), Error);  // out's width is not the experts' rows
    a.out = output(TensorType::F32, 2, rows);
    a.down = nullptr;
    EXPECT_THROW(backend_->moe_down_combine(a), Error);
}

// A product right after a norm reads the norm's output as any other product does: a GPU backend takes the
// activation blocks the norm wrote beside its output, which must equal quantizing the output afresh.
TEST_P(FusedOps, ProductsAfterANormSeeItsOutput) {
    const int64_t rows = 70, cols = 256, heads = 4;
    for (TensorType wt : {TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_0_ROCMFP4}) {
        const std::string type(gguf::traits(wt).name);
        const Tensor w = upload(wt, rows, cols, random(rows * cols));
        const Tensor norm_weight = upload_f32(1, cols, random(cols)), head_weight = upload_f32(1, cols / heads, random(cols / heads));
        for (int64_t tokens : {1, 5}) {
            const std::string what = type + ", " + std::to_string(tokens) + " tokens";
            // Everything allocated first: an allocation makes a GPU backend forget the blocks it holds.
            const Tensor x = upload_f32(tokens, cols, random(tokens * cols, 2.0f)), h = output(TensorType::F32, tokens, cols);
            const Tensor y = upload_f32(tokens, cols, random(tokens * cols));
            const Tensor z = upload_f32(tokens * heads, cols / heads, random(tokens * cols));
            const Tensor after = output(TensorType::F32, tokens, rows), copy = output(TensorType::F32, tokens, cols);
            const Tensor fresh = output(TensorType::F32, tokens, rows);
            const auto expect_same_product = [&](const std::string& norm) {
                backend_->matmul(w, h, after);
                const std::vector<float> values = download(h);
                backend_->write(copy, std::as_bytes(std::span(values)));
                backend_->matmul(w, copy, fresh);
                expect_identical(download(after), download(fresh), norm + ", " + what);
            };
            backend_->rms_norm(x, norm_weight, 1e-6f, h);
            expect_same_product("rms_norm");
            backend_->add_rms_norm(x, y, norm_weight, 1e-6f, h);
            expect_same_product("add_rms_norm");
            // Heads normed as rows of their own, read back as whole rows (the Gated DeltaNet's output).
            backend_->rms_norm_gated(x.reshaped(cols / heads), head_weight, z, 1e-6f, h.reshaped(cols / heads));
            expect_same_product("rms_norm_gated");
        }
    }
}

// Products of one input against one matmul each: mixed integer types (one launch on a GPU), a float type that splits
// the run, F32 matrices (another launch), biases, and token counts of one run, two runs and more than a mat x vec
// takes.
TEST_P(FusedOps, ProductsOfOneInputRoundAsTheirParts) {
    const int64_t cols = 256;
    const TensorType types[] = {TensorType::Q4_0_ROCMFP4, TensorType::Q4_0_ROCMFP4_FAST, TensorType::Q8_0,
                                TensorType::F16, TensorType::Q4_0, TensorType::Q4_0_ROCMFP4_FAST,
                                TensorType::F32, TensorType::F32};
    const int64_t rows[] = {96, 70, 33, 40, 8, 1, 130, 1};  // the last two as a router and a one-row gate
    std::vector<Tensor> weights, biases;
    for (size_t i = 0; i < std::size(types); ++i) {
        weights.push_back(upload(types[i], rows[i], cols, random(rows[i] * cols)));
        biases.push_back(upload_f32(1, rows[i], random(rows[i])));
    }
    for (int64_t tokens : {1, 5, 20, 40}) {
        const Tensor x = upload_f32(tokens, cols, random(tokens * cols));
        std::vector<Product> products;
        std::vector<Tensor> plain;
        for (size_t i = 0; i < std::size(types); ++i) {
            const bool biased = i == 1 || i == 6;
            products.push_back({&weights[i], output(TensorType::F32, tokens, rows[i]), biased ? &biases[i] : nullptr});
            plain.push_back(output(TensorType::F32, tokens, rows[i]));
        }
        backend_->matmul_many(x, products);
        for (size_t i = 0; i < std::size(types); ++i) {
            backend_->matmul(weights[i], x, plain[i], products[i].bias);
            expect_identical(download(products[i].out), download(plain[i]),
                             std::string(gguf::traits(types[i]).name) + ", " + std::to_string(tokens) + " tokens");
        }
    }
    const Tensor x = upload_f32(2, cols, random(2 * cols)), out = output(TensorType::F32, 2, rows[0]);
    const Product aliased[] = {{&weights[0], out}, {&weights[0], out}};
    EXPECT_THROW(backend_->matmul_many(x, aliased), Error);
    const Product misfit[] = {{&weights[0], output(TensorType::F32, 2, rows[0] + 1)}};
    EXPECT_THROW(backend_->matmul_many(x, misfit), Error);
}

// The token-by-token Gated DeltaNet core: close to its composition (a GPU's fused kernel sums its norms in its own
// order), and a batch of tokens bit for bit equal to the same tokens one call each (decode and verify round alike),
// with the convolution state, the recurrent state and the snapshots. Sizes of one and two value heads per key head.
TEST_P(FusedOps, DeltaNetRecurrentStepsAsItsParts) {
    struct Shape {
        int hk, hv, dk, dv;
    };
    for (const Shape sh : {Shape{2, 4, 64, 64}, Shape{1, 2, 128, 128}, Shape{2, 2, 64, 96}}) {
        const std::string what = std::to_string(sh.hk) + "/" + std::to_string(sh.hv) + " heads of " +
                                 std::to_string(sh.dk) + "/" + std::to_string(sh.dv);
        const int64_t T = 5, K = 4, qk = int64_t{sh.hk} * sh.dk, vd = int64_t{sh.hv} * sh.dv, C = 2 * qk + vd;
        const int64_t state_size = int64_t{sh.hv} * sh.dk * sh.dv;
        const std::vector<float> mix = random(T * C), conv_w = random(C * K, 0.5f), conv0 = random((K - 1) * C),
                                 beta = random(T * sh.hv, 3.0f), alpha = random(T * sh.hv, 2.0f),
                                 dt = random(sh.hv), z = random(T * vd), norm = random(sh.dv),
                                 state0 = random(state_size, 0.1f);
        std::vector<float> a = random(sh.hv);
        for (float& v : a) v = -std::abs(v);
        const Tensor tw = upload_f32(C, K, conv_w), tdt = upload_f32(1, sh.hv, dt), ta = upload_f32(1, sh.hv, a),
                     tnorm = upload_f32(1, sh.dv, norm);
        // One run over tokens [first, first + n) of every input, on the given states.
        struct Run {
            Tensor conv_state, state, out, snapshots;
        };
        const auto make_run = [&] {
            return Run{upload_f32(K - 1, C, conv0), upload_f32(sh.hv, int64_t{sh.dk} * sh.dv, state0),
                       output(TensorType::F32, T, vd), output(TensorType::F32, 2, state_size)};
        };
        const auto step = [&](Run& run, int64_t first, int64_t n, bool fused) {
            const auto rows = [&](const std::vector<float>& v, int64_t cols) {
                return upload_f32(n, cols, std::vector<float>(v.begin() + first * cols, v.begin() + (first + n) * cols));
            };
            const Tensor tmix = rows(mix, C), conv = output(TensorType::F32, n, C);
            DeltaRuleArgs r;
            r.q = conv.column_range(0, qk);
            r.k = conv.column_range(qk, qk);
            r.v = conv.column_range(2 * qk, vd);
            r.beta = rows(beta, sh.hv);
            r.g = rows(alpha, sh.hv);
            r.state = run.state;
            r.out = run.out.row_range(first, n);
            // The last two tokens of the batch keep their states (a verify batch's rollback points).
            const int64_t kept_from = std::max<int64_t>(first, T - 2), keep = std::max<int64_t>(0, first + n - kept_from);
            const Tensor snaps = run.snapshots.row_range(kept_from - (T - 2), keep);
            r.snapshots = keep > 0 ? &snaps : nullptr;
            r.n_k_heads = sh.hk;
            r.n_v_heads = sh.hv;
            r.d_k = sh.dk;
            r.d_v = sh.dv;
            r.q_scale = 1.0f / std::sqrt(float(sh.dk));
            const Tensor tz = rows(z, vd);
            if (fused) return backend_->deltanet_recurrent({r, tmix, tw, run.conv_state, conv, tdt, ta, tz, tnorm, 1e-6f, 1e-5f});
            backend_->deltanet_gates(r.beta, r.g, tdt, ta);
            backend_->conv1d_causal_silu(tmix, tw, run.conv_state, conv);
            backend_->l2_norm(r.q, sh.dk, 1e-6f, r.q);
            backend_->l2_norm(r.k, sh.dk, 1e-6f, r.k);
            backend_->delta_rule(r);
            backend_->rms_norm_gated(r.out.reshaped(sh.dv), tnorm, tz.reshaped(sh.dv), 1e-5f, r.out.reshaped(sh.dv));
        };
        Run batch = make_run(), single = make_run(), parts = make_run();
        step(batch, 0, T, true);
        for (int64_t t = 0; t < T; ++t) step(single, t, 1, true);
        step(parts, 0, T, false);
        const auto compare = [&](const Tensor& got, const Tensor& one_by_one, const Tensor& composed,
                                 const std::string& name) {
            const std::vector<float> g = download(got), c = download(composed);
            expect_identical(g, download(one_by_one), what + ": batch against one token at a time, " + name);
            expect_close(g, reference::Matrix(c.begin(), c.end()), 1e-5, (what + ": against the parts, " + name).c_str());
        };
        compare(batch.out, single.out, parts.out, "out");
        compare(batch.state, single.state, parts.state, "state");
        compare(batch.conv_state, single.conv_state, parts.conv_state, "convolution state");
        compare(batch.snapshots, single.snapshots, parts.snapshots, "snapshots");
    }
}

INSTANTIATE_TEST_SUITE_P(AllBackends, FusedOps, ::testing::ValuesIn(kBackends),
                         [](const ::testing::TestParamInfo<BackendCase>& p) { return p.param.name; });

}  // namespace
