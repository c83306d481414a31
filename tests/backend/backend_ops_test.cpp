// SPDX-License-Identifier: MIT
// The op suite: every operation of every backend against the plain reference (reference_ops.cpp). A new backend
// joins by adding its factory to kBackends; the tests stay unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>

#include "backend/backend_ops_fixture.h"
#include "backend/reference_ops.h"
#include "backend/backend.h"
#include "quant/quant.h"

using namespace ember;
using gguf::TensorType;

namespace {

using namespace ember::op_suite;


// "f16 cache, 8/2 heads of 64, 137 rows, 100 tokens"
std::string attention_case(TensorType cache_type, const AttentionParams& p, int64_t n_kv, int64_t tokens) {
    return std::string(gguf::traits(cache_type).name) + " cache, " + std::to_string(p.n_head) + "/" +
           std::to_string(p.n_head_kv) + " heads of " + std::to_string(p.head_dim) + ", " + std::to_string(n_kv) +
           " rows, " + std::to_string(tokens) + " tokens";
}

TEST_P(BackendOps, GetRowsOfEveryType) {
    for (const gguf::TypeTraits& t : gguf::known_types()) {
        if (!quant::can_quantize(t.type) || !quant::can_dequantize(t.type) || t.type == TensorType::Q8_K) continue;
        const int64_t cols = 256, rows = 5;
        reference::Matrix stored;
        const Tensor table = upload(t.type, rows, cols, random(rows * cols), &stored);
        const std::vector<int32_t> ids = {3, 0, 3, 4};
        const Tensor out = output(TensorType::F32, 4, cols);
        backend_->get_rows(table, ids, out);
        reference::Matrix want;
        for (int32_t id : ids) want.insert(want.end(), stored.begin() + id * cols, stored.begin() + (id + 1) * cols);
        expect_close(download(out), want, 0.0, std::string(t.name).c_str());
    }
    const int32_t bad[] = {9};
    EXPECT_THROW(backend_->get_rows(upload_f32(2, 32, random(64)), bad, output(TensorType::F32, 1, 32)), Error);
}

TEST_P(BackendOps, MatmulOfEveryWeightType) {
    for (const gguf::TypeTraits& t : gguf::known_types()) {
        if (!quant::can_quantize(t.type) || !quant::can_dequantize(t.type) || t.type == TensorType::Q8_K) continue;
        // 13 and 32 tokens: speculative verification, in chunks of the mat x vec kernels on the GPU backends. 40 x
        // 2304: a prompt's product with too few tiles for the device, split along the inputs on CUDA.
        for (auto [tokens, cols] : {std::pair<int64_t, int64_t>{1, 512}, {7, 512}, {13, 512}, {32, 512}, {1, 2304},
                                    {3, 2304}, {40, 2304}}) {
            const int64_t rows = 33;
            reference::Matrix w_stored;
            const Tensor w = upload(t.type, rows, cols, random(rows * cols), &w_stored);
            const std::vector<float> x = random(tokens * cols);
            const Tensor out = output(TensorType::F32, tokens, rows);
            backend_->matmul(w, upload_f32(tokens, cols, x), out);
            const reference::Matrix want = reference::matmul(w_stored, rows, cols, to_double(x), tokens);
            // Float weights use float activations; block types use 8-bit activations (about 1% per element).
            const double tolerance = t.quantized ? 3e-2 : 1e-5;
            expect_close(download(out), want, tolerance, std::string(t.name).c_str());
        }
    }
}

// Many block products recorded before the first read, with an expert product in the middle whose activations
// are larger than all the others together (a backend that stages activations in scratch memory reuses and grows
// it while earlier products still wait to run).
TEST_P(BackendOps, ManyBlockProductsBeforeOneRead) {
    const int64_t rows = 33, cols = 4096, tokens = 8, n = 40, experts = 2, slots = 600;
    std::vector<reference::Matrix> w_stored(2);
    const Tensor w[2] = {upload(TensorType::Q4_0, rows, cols, random(rows * cols), &w_stored[0]),
                         upload(TensorType::Q4_0_ROCMFP4, rows, cols, random(rows * cols), &w_stored[1])};
    std::vector<int32_t> expert_ids(slots);
    for (int64_t s = 0; s < slots; ++s) expert_ids[static_cast<size_t>(s)] = static_cast<int32_t>(s % experts);
    const Tensor ids = output(TensorType::I32, slots, 1);
    backend_->write(ids, std::as_bytes(std::span(expert_ids)));
    reference::Matrix we_stored;
    const int64_t expert_rows = 16;
    const Tensor we = upload(TensorType::Q8_0, experts * expert_rows, cols, random(experts * expert_rows * cols),
                             &we_stored);
    const std::vector<float> xe = random(slots * cols);
    const Tensor xe_t = upload_f32(slots, cols, xe);
    const Tensor ye = output(TensorType::F32, slots, expert_rows);

    std::vector<std::vector<float>> xs;
    std::vector<Tensor> x_t, outs;
    for (int64_t i = 0; i < n; ++i) {
        xs.push_back(random(tokens * cols));
        x_t.push_back(upload_f32(tokens, cols, xs.back()));
        outs.push_back(output(TensorType::F32, tokens, rows));
    }
    for (int64_t i = 0; i < n; ++i) {
        backend_->matmul(w[i % 2], x_t[static_cast<size_t>(i)], outs[static_cast<size_t>(i)]);
        if (i == n / 2) backend_->matmul_experts(we, experts, xe_t, ids, ye);
    }
    for (int64_t i = 0; i < n; ++i) {
        const reference::Matrix want =
            reference::matmul(w_stored[static_cast<size_t>(i % 2)], rows, cols, to_double(xs[static_cast<size_t>(i)]),
                              tokens);
        expect_close(download(outs[static_cast<size_t>(i)]), want, 3e-2, ("product " + std::to_string(i)).c_str());
    }
    reference::Matrix want(static_cast<size_t>(slots * expert_rows));
    for (int64_t s = 0; s < slots; ++s)
        for (int64_t r = 0; r < expert_rows; ++r) {
            double sum = 0;
            for (int64_t c = 0; c < cols; ++c)
                sum += we_stored[((s % experts) * expert_rows + r) * cols + c] * xe[s * cols + c];
            want[s * expert_rows + r] = sum;
        }
    expect_close(download(ye), want, 3e-2, "experts");
}

TEST_P(BackendOps, MatmulWithBias) {
    const int64_t cols = 64, rows = 8;
    const std::vector<float> w = random(rows * cols), x = random(2 * cols), b = random(rows);
    const Tensor bias = upload_f32(1, rows, b);
    const Tensor out = output(TensorType::F32, 2, rows);
    backend_->matmul(upload_f32(rows, cols, w), upload_f32(2, cols, x), out, &bias);
    reference::Matrix want = reference::matmul(to_double(w), rows, cols, to_double(x), 2);
    for (size_t i = 0; i < want.size(); ++i) want[i] += b[i % rows];
    expect_close(download(out), want, 1e-5, "matmul+bias");
}

// A backend that reuses what it derived from an input (activations quantized once for several products) must see
// every change to it: a write on the device, a write from the host, and a neighbouring window of the same buffer.
TEST_P(BackendOps, ProductsSeeTheirInputsChange) {
    const int64_t rows = 33, cols = 512;
    reference::Matrix w_stored;
    const Tensor w = upload(TensorType::Q4_0, rows, cols, random(rows * cols), &w_stored);
    const std::vector<float> both = random(2 * cols), d = random(cols), fresh = random(cols);
    const Tensor xs = upload_f32(2, cols, both), dt = upload_f32(1, cols, d);
    const Tensor x = xs.row_range(0, 1), neighbour = xs.row_range(1, 1);
    std::vector<Tensor> outs;
    for (int i = 0; i < 5; ++i) outs.push_back(output(TensorType::F32, 1, rows));
    backend_->matmul(w, x, outs[0]);
    backend_->matmul(w, x, outs[1]);
    backend_->matmul(w, neighbour, outs[2]);
    backend_->add(x, dt, x);
    backend_->matmul(w, x, outs[3]);
    backend_->write(x, std::as_bytes(std::span(fresh)));
    backend_->matmul(w, x, outs[4]);

    std::vector<double> x0(both.begin(), both.begin() + cols), x1(both.begin() + cols, both.end()), x2 = x0;
    for (int64_t c = 0; c < cols; ++c) x2[c] += d[c];
    const std::vector<double> inputs[5] = {x0, x0, x1, x2, to_double(fresh)};
    for (size_t i = 0; i < 5; ++i)
        expect_close(download(outs[i]), reference::matmul(w_stored, rows, cols, inputs[i], 1), 3e-2,
                     ("product " + std::to_string(i)).c_str());
}

// Norms followed by products, as a decode step has them: a backend may hand the product its input already
// quantized by the norm (a whole-row norm; a gated norm per head whose output the product reads as whole rows).
TEST_P(BackendOps, ProductsOfNormalizedRows) {
    const int64_t tokens = 3, cols = 1024, head = 128, rows = 40;
    for (TensorType type : {TensorType::Q4_0, TensorType::Q8_0, TensorType::Q4_0_ROCMFP4}) {
        const std::string name(gguf::traits(type).name);
        reference::Matrix w_stored;
        const Tensor w = upload(type, rows, cols, random(rows * cols), &w_stored);
        const std::vector<float> x = random(tokens * cols), nw = random(cols), hw = random(head), z = random(tokens * cols);
        const Tensor xt = upload_f32(tokens, cols, x), nwt = upload_f32(1, cols, nw), hwt = upload_f32(1, head, hw);
        const Tensor zt = upload_f32(tokens, cols, z), normed = output(TensorType::F32, tokens, cols);
        const Tensor out = output(TensorType::F32, tokens, rows), out_gated = output(TensorType::F32, tokens, rows);
        backend_->rms_norm(xt, nwt, 1e-6f, normed);
        backend_->matmul(w, normed, out);
        const reference::Matrix n1 = reference::rms_norm(to_double(x), cols, to_double(nw), 1e-6);
        expect_close(download(out), reference::matmul(w_stored, rows, cols, n1, tokens), 3e-2, (name + " rms").c_str());
        backend_->rms_norm_gated(xt.reshaped(head), hwt, zt.reshaped(head), 1e-6f, normed.reshaped(head));
        backend_->matmul(w, normed, out_gated);
        const reference::Matrix n2 = reference::rms_norm_gated(to_double(x), head, to_double(hw), to_double(z), 1e-6);
        expect_close(download(out_gated), reference::matmul(w_stored, rows, cols, n2, tokens), 3e-2,
                     (name + " gated").c_str());
    }
}

TEST_P(BackendOps, RmsNormInPlaceAndPerHead) {
    const int64_t rows = 6, cols = 96;
    const std::vector<float> x = random(rows * cols, 3.0f), w = random(cols);
    const Tensor tx = upload_f32(rows, cols, x);
    backend_->rms_norm(tx, upload_f32(1, cols, w), 1e-5f, tx);
    expect_close(download(tx), reference::rms_norm(to_double(x), cols, to_double(w), 1e-5), 1e-6, "rms_norm");

    const std::vector<float> wh = random(32);
    const Tensor heads = upload_f32(rows, cols, x);
    backend_->rms_norm(heads.reshaped(32), upload_f32(1, 32, wh), 1e-6f, heads.reshaped(32));
    expect_close(download(heads), reference::rms_norm(to_double(x), 32, to_double(wh), 1e-6), 1e-6, "per head");
}

TEST_P(BackendOps, ElementwiseWithBroadcast) {
    const int64_t rows = 5, cols = 40;
    const std::vector<float> a = random(rows * cols), b = random(rows * cols), c = random(cols);
    reference::Matrix sum(a.size()), prod(a.size()), bsum(a.size()), scaled(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
        sum[i] = double(a[i]) + b[i];
        prod[i] = double(a[i]) * b[i];
        bsum[i] = double(a[i]) + c[i % cols];
        scaled[i] = double(a[i]) * 0.25;
    }
    const Tensor out = output(TensorType::F32, rows, cols);
    backend_->add(upload_f32(rows, cols, a), upload_f32(rows, cols, b), out);
    expect_close(download(out), sum, 1e-7, "add");
    backend_->mul(upload_f32(rows, cols, a), upload_f32(rows, cols, b), out);
    expect_close(download(out), prod, 1e-7, "mul");
    const Tensor ta = upload_f32(rows, cols, a);
    backend_->add(ta, upload_f32(1, cols, c), ta);
    expect_close(download(ta), bsum, 1e-7, "add broadcast in place");
    backend_->scale(upload_f32(rows, cols, a), 0.25f, out);
    expect_close(download(out), scaled, 1e-7, "scale");
}

TEST_P(BackendOps, GatedActivations) {
    // Gates and ups well beyond swiglu_clamped's limits of +-7.
    const int64_t rows = 3, cols = 128;
    const std::vector<float> g = random(rows * cols, 5.0f), u = random(rows * cols, 5.0f);
    for (Activation act : {Activation::silu, Activation::gelu, Activation::swiglu_clamped}) {
        const Tensor tg = upload_f32(rows, cols, g);
        backend_->gated_activation(act, tg, upload_f32(rows, cols, u), tg);
        expect_close(download(tg), reference::gated_activation(act, to_double(g), to_double(u)), 1e-5,
                     activation_name(act));
    }
}

TEST_P(BackendOps, RopeModesPartialAndScaled) {
    const int head_dim = 64;
    const int64_t cols = 3 * head_dim;
    const std::vector<int32_t> positions = {0, 1, 17, 4095};
    const std::vector<float> factors = {1.0f, 1.5f, 2.0f, 4.0f, 8.0f, 1.0f, 1.0f, 2.0f,
                                        1.0f, 1.0f, 3.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
    struct Case { RopeMode mode; int n_rot; float scale; bool with_factors; };
    for (const Case c : {Case{RopeMode::normal, 64, 1.0f, false}, Case{RopeMode::neox, 64, 1.0f, false},
                         Case{RopeMode::neox, 32, 0.5f, true}, Case{RopeMode::normal, 16, 1.0f, false}}) {
        RopeParams p;
        p.mode = c.mode;
        p.n_rot = c.n_rot;
        p.freq_base = 10000.0f;
        p.freq_scale = c.scale;
        const std::vector<float> x = random(positions.size() * cols);
        const Tensor t = upload_f32(static_cast<int64_t>(positions.size()), cols, x);
        const std::vector<float> f(factors.begin(), factors.begin() + c.n_rot / 2);
        const Tensor tf = upload_f32(1, c.n_rot / 2, f);
        backend_->rope(t, head_dim, positions, p, c.with_factors ? &tf : nullptr);
        reference::Matrix want = to_double(x);
        const reference::Matrix fd = c.with_factors ? to_double(f) : reference::Matrix{};
        reference::rope(want, cols, head_dim, positions, p, fd);
        expect_close(download(t), want, 1e-5, "rope");
    }
}

TEST_P(BackendOps, AttentionOverEveryCacheType) {
    // Head layouts: groups of 4, 8 (Qwen3.6: 16 heads over 2 kv heads) and 3; contexts within one tile of the
    // CPU's cache walk and over several.
    struct Case {
        AttentionParams p;
        int64_t n_kv;
    };
    for (const Case& c : {Case{{8, 2, 64, 0.125f}, 30}, Case{{16, 2, 32, 0.17f}, 70}, Case{{6, 2, 16, 0.25f}, 41}}) {
        const AttentionParams& p = c.p;
        const int64_t n_kv = c.n_kv, kv_cols = int64_t{p.n_head_kv} * p.head_dim, q_cols = int64_t{p.n_head} * p.head_dim;
        const int64_t capacity = n_kv + 10, prefill = n_kv - 3;
        for (TensorType cache_type : {TensorType::F32, TensorType::F16, TensorType::Q8_0}) {
            if (cache_type == TensorType::Q8_0 && p.head_dim % 32 != 0) continue;  // q8_0 rows hold whole heads
            const Tensor k_cache = output(cache_type, capacity, kv_cols);
            const Tensor v_cache = output(cache_type, capacity, kv_cols);
            // n_kv positions in two batches: a prefill and a verify-like batch of 3.
            const std::vector<float> k = random(n_kv * kv_cols), v = random(n_kv * kv_cols);
            const std::vector<int32_t> first = consecutive(0, prefill),
                                       second = consecutive(static_cast<int32_t>(prefill), 3);
            backend_->store_kv(upload_f32(prefill, kv_cols, {k.begin(), k.begin() + prefill * kv_cols}),
                               upload_f32(prefill, kv_cols, {v.begin(), v.begin() + prefill * kv_cols}), k_cache,
                               v_cache, first);
            backend_->store_kv(upload_f32(3, kv_cols, {k.begin() + prefill * kv_cols, k.end()}),
                               upload_f32(3, kv_cols, {v.begin() + prefill * kv_cols, v.end()}), k_cache, v_cache,
                               second);
            const std::vector<float> q = random(3 * q_cols);
            const Tensor out = output(TensorType::F32, 3, q_cols);
            backend_->attention(upload_f32(3, q_cols, q), k_cache, v_cache, n_kv, second, p, out);

            // The reference sees exactly what the cache stores.
            reference::Matrix k_stored(static_cast<size_t>(n_kv * kv_cols)), v_stored(static_cast<size_t>(n_kv * kv_cols));
            for (int64_t j = 0; j < n_kv; ++j) {
                std::vector<std::byte> row(gguf::row_bytes(cache_type, kv_cols));
                std::vector<float> tmp(static_cast<size_t>(kv_cols));
                quant::quantize_row(cache_type, k.data() + j * kv_cols, row.data(), kv_cols);
                quant::dequantize_row(cache_type, row.data(), tmp.data(), kv_cols);
                std::copy(tmp.begin(), tmp.end(), k_stored.begin() + j * kv_cols);
                quant::quantize_row(cache_type, v.data() + j * kv_cols, row.data(), kv_cols);
                quant::dequantize_row(cache_type, row.data(), tmp.data(), kv_cols);
                std::copy(tmp.begin(), tmp.end(), v_stored.begin() + j * kv_cols);
            }
            const reference::Matrix want = reference::attention(to_double(q), k_stored, v_stored, n_kv, second, p);
            const std::string what = std::string(gguf::traits(cache_type).name) + " cache, " +
                                     std::to_string(p.n_head) + "/" + std::to_string(p.n_head_kv) + " heads";
            expect_close(download(out), want, 1e-5, what.c_str());
        }
    }
}

TEST_P(BackendOps, CausalMaskHidesLaterPositions) {
    const AttentionParams p{2, 1, 32, 1.0f};
    const Tensor k_cache = output(TensorType::F32, 8, 32), v_cache = output(TensorType::F32, 8, 32);
    std::vector<int32_t> pos = {0, 1, 2, 3};
    const std::vector<float> k = random(4 * 32), v = random(4 * 32), q = random(4 * 64);
    backend_->store_kv(upload_f32(4, 32, k), upload_f32(4, 32, v), k_cache, v_cache, pos);
    const Tensor out = output(TensorType::F32, 4, 64);
    backend_->attention(upload_f32(4, 64, q), k_cache, v_cache, 4, pos, p, out);
    const std::vector<float> got = download(out);
    // Position 0 sees only itself: its output is v[0] for both heads.
    for (int i = 0; i < 32; ++i) {
        EXPECT_NEAR(got[static_cast<size_t>(i)], v[static_cast<size_t>(i)], 1e-6);
        EXPECT_NEAR(got[static_cast<size_t>(32 + i)], v[static_cast<size_t>(i)], 1e-6);
    }
}

TEST_P(BackendOps, AttentionOverLongContextsAndWideGroups) {
    // Long caches read by a few tokens (the Vulkan kernel splits the rows into chunks and merges their results),
    // queries at early positions that must not see the later rows, a prefill-like batch of many tokens, head
    // sizes 128 and 256, 1 to 12 query heads per kv head, and a head size that is not a multiple of 4.
    struct Case {
        AttentionParams p;
        int64_t n_kv;
        std::vector<int32_t> positions;
    };
    const std::vector<int32_t> prefill = consecutive(0, 128);
    const Case cases[] = {
        {{16, 2, 128, 0.088f}, 1100, {1099, 1098, 700, 40}},  // Qwen3.6's layout: groups of 8
        {{8, 1, 256, 0.0625f}, 1030, {1029}},
        {{4, 4, 64, 0.125f}, 1500, {1499, 33, 0}},
        {{24, 2, 64, 0.125f}, 300, {299, 150}},
        {{8, 2, 64, 0.125f}, 128, prefill},
        {{4, 2, 18, 0.24f}, 90, {89, 10}},
    };
    for (const Case& c : cases) {
        const AttentionParams& p = c.p;
        const int64_t kv_cols = int64_t{p.n_head_kv} * p.head_dim, q_cols = int64_t{p.n_head} * p.head_dim;
        const int64_t tokens = static_cast<int64_t>(c.positions.size());
        const std::vector<int32_t> rows = consecutive(0, c.n_kv);
        for (TensorType cache_type : {TensorType::F32, TensorType::F16, TensorType::Q8_0}) {
            if (cache_type == TensorType::Q8_0 && p.head_dim % 32 != 0) continue;
            const Tensor k_cache = output(cache_type, c.n_kv + 5, kv_cols);
            const Tensor v_cache = output(cache_type, c.n_kv + 5, kv_cols);
            const std::vector<float> k = random(c.n_kv * kv_cols), v = random(c.n_kv * kv_cols);
            backend_->store_kv(upload_f32(c.n_kv, kv_cols, k), upload_f32(c.n_kv, kv_cols, v), k_cache, v_cache, rows);
            const std::vector<float> q = random(tokens * q_cols, 2.0f);  // peaked weights: a misplaced row shows
            const Tensor out = output(TensorType::F32, tokens, q_cols);
            backend_->attention(upload_f32(tokens, q_cols, q), k_cache, v_cache, c.n_kv, c.positions, p, out);

            const auto stored = [&](const std::vector<float>& x) {
                reference::Matrix m(x.size());
                std::vector<std::byte> row(gguf::row_bytes(cache_type, kv_cols));
                std::vector<float> tmp(static_cast<size_t>(kv_cols));
                for (int64_t j = 0; j < c.n_kv; ++j) {
                    quant::quantize_row(cache_type, x.data() + j * kv_cols, row.data(), kv_cols);
                    quant::dequantize_row(cache_type, row.data(), tmp.data(), kv_cols);
                    std::copy(tmp.begin(), tmp.end(), m.begin() + j * kv_cols);
                }
                return m;
            };
            const reference::Matrix want =
                reference::attention(to_double(q), stored(k), stored(v), c.n_kv, c.positions, p);
            expect_close(download(out), want, 1e-5, attention_case(cache_type, p, c.n_kv, tokens).c_str());
        }
    }
}

TEST_P(BackendOps, AttentionOfManyQueries) {
    // Batches of queries that GPU backends take in tiles (of 32 or 64 queries and 16 or 32 rows): counts and cache
    // lengths that are not multiples of a tile, a prefill continuing a cache, bidirectional batches, rows past
    // every query's position, positions in any order or beyond the cache, groups of 1 to 4 query heads per kv head,
    // and each head size the Vulkan tiled kernel is built for (which takes f32 and f16 caches).
    std::vector<int32_t> scattered = consecutive(0, 40);
    std::shuffle(scattered.begin(), scattered.end(), std::mt19937(7));
    scattered[5] = 60;  // sees the whole cache
    const AttentionCase cases[] = {
        {{8, 2, 64, 0.125f}, 137, consecutive(37, 100)},            // the last 100 of a 137-token prompt
        {{4, 4, 72, 0.118f}, 150, std::vector<int32_t>(150, 149)},  // an image of 150 patches
        {{6, 2, 128, 0.088f}, 83, consecutive(0, 70)},              // rows 70..82 seen by none
        {{2, 1, 32, 0.17f}, 45, scattered},
        {{3, 1, 80, 0.11f}, 65, std::vector<int32_t>(65, 64)},
        {{4, 4, 16, 0.25f}, 48, std::vector<int32_t>(48, 47)},  // the vision fixture's 48 patches
    };
    for (const AttentionCase& c : cases)
        for (TensorType cache_type : {TensorType::F32, TensorType::F16})
            expect_attention(c, cache_type, 1e-5,
                             attention_case(cache_type, c.p, c.n_kv, static_cast<int64_t>(c.positions.size())));
}

TEST_P(BackendOps, AttentionInASlidingWindow) {
    // Gemma 3's local layers: each query sees only the last `window` rows up to its position. Decode steps far into
    // a long cache (the split kernels' chunks start inside the window), a prefill batch longer than the window (the
    // tiled kernels, whose tiles hold queries with different first rows), a window of one row, a window longer
    // than every position (no effect), and positions in any order.
    std::vector<int32_t> scattered = consecutive(0, 70);
    std::shuffle(scattered.begin(), scattered.end(), std::mt19937(11));
    const AttentionCase cases[] = {
        {{4, 1, 256, 0.0625f, 512}, 1300, {1299, 1000, 511, 512, 3}},  // Gemma 3 270M's local layers
        {{8, 2, 64, 0.125f, 40}, 137, consecutive(37, 100)},
        {{4, 4, 72, 0.118f, 17}, 150, consecutive(0, 150)},
        {{6, 2, 128, 0.088f, 1}, 83, consecutive(10, 70)},
        {{2, 1, 32, 0.17f, 9}, 70, scattered},
        {{3, 1, 80, 0.11f, 1000}, 65, consecutive(0, 65)},
    };
    for (const AttentionCase& c : cases)
        for (TensorType cache_type : {TensorType::F32, TensorType::F16, TensorType::Q8_0}) {
            if (cache_type == TensorType::Q8_0 && c.p.head_dim % 32 != 0) continue;
            // Q8_0 rows decoded in another order than the reference's add rounding over 512 rows of 256 (Vulkan:
            // 3.8e-5 with or without the window).
            expect_attention(c, cache_type, cache_type == TensorType::Q8_0 ? 1e-4 : 1e-5,
                             attention_case(cache_type, c.p, c.n_kv, static_cast<int64_t>(c.positions.size())) +
                                 ", window " + std::to_string(c.p.window));
        }
}

TEST_P(BackendOps, SoftmaxRows) {
    const std::vector<float> x = random(4 * 1000, 5.0f);
    const Tensor t = upload_f32(4, 1000, x);
    backend_->softmax(t);
    reference::Matrix want = to_double(x);
    reference::softmax(want, 1000);
    expect_close(download(t), want, 1e-5, "softmax");
}

TEST_P(BackendOps, ConvertBetweenTypes) {
    const std::vector<float> x = random(3 * 64);
    for (TensorType to : {TensorType::F16, TensorType::BF16, TensorType::Q8_0}) {
        const Tensor converted = output(to, 3, 64);
        backend_->convert(upload_f32(3, 64, x), converted);
        const Tensor back = output(TensorType::F32, 3, 64);
        backend_->convert(converted, back);
        reference::Matrix stored;
        upload(to, 3, 64, x, &stored);
        expect_close(download(back), stored, 0.0, std::string(gguf::traits(to).name).c_str());
    }
}

TEST_P(BackendOps, UnaryOps) {
    const std::vector<float> x = random(3 * 70, 4.0f);
    for (UnaryOp op : {UnaryOp::silu, UnaryOp::sigmoid, UnaryOp::softplus, UnaryOp::exp}) {
        const Tensor t = upload_f32(3, 70, x);
        backend_->unary(op, t, t);
        reference::Matrix want(x.size());
        for (size_t i = 0; i < x.size(); ++i) want[i] = reference::unary(op, x[i]);
        expect_close(download(t), want, 1e-6, "unary");
    }
}

TEST_P(BackendOps, MulBroadcastsAColumn) {
    const std::vector<float> a = random(4 * 10), c = random(4);
    const Tensor out = output(TensorType::F32, 4, 10);
    backend_->mul(upload_f32(4, 10, a), upload_f32(4, 1, c), out);
    reference::Matrix want(a.size());
    for (size_t i = 0; i < a.size(); ++i) want[i] = double(a[i]) * c[i / 10];
    expect_close(download(out), want, 1e-7, "mul column");
}

TEST_P(BackendOps, L2NormPerHeadOnAStridedView) {
    const std::vector<float> x = random(5 * 96, 2.0f);
    const Tensor t = upload_f32(5, 96, x);
    const Tensor view = t.column_range(32, 64);  // two heads of 32 in the middle of each row
    const Tensor out = output(TensorType::F32, 5, 64);
    backend_->l2_norm(view, 32, 1e-6f, out);
    reference::Matrix slice;
    for (int r = 0; r < 5; ++r) slice.insert(slice.end(), x.begin() + r * 96 + 32, x.begin() + r * 96 + 96);
    expect_close(download(out), reference::l2_norm(slice, 32, 1e-6), 1e-6, "l2_norm");
}

TEST_P(BackendOps, GatedRmsNorm) {
    const std::vector<float> x = random(6 * 32, 2.0f), z = random(6 * 32, 2.0f), w = random(32);
    const Tensor t = upload_f32(6, 32, x);
    backend_->rms_norm_gated(t, upload_f32(1, 32, w), upload_f32(6, 32, z), 1e-6f, t);
    expect_close(download(t), reference::rms_norm_gated(to_double(x), 32, to_double(w), to_double(z), 1e-6), 1e-5,
                 "gated rms_norm");
}

TEST_P(BackendOps, CausalConvCarriesItsState) {
    const int64_t channels = 48, kernel = 4;
    const std::vector<float> w = random(channels * kernel), a = random(5 * channels), b = random(2 * channels),
                             c = random(40 * channels);
    const Tensor state = upload_f32(kernel - 1, channels, std::vector<float>((kernel - 1) * channels, 0.0f));
    reference::Matrix ref_state((kernel - 1) * channels, 0.0);
    const Tensor weight = upload_f32(channels, kernel, w);
    // a batch of 5, one of 2 (shorter than the state), then one of 40 (a prefill, in chunks on a GPU)
    for (const auto* part : {&a, &b, &c}) {
        const int64_t n = static_cast<int64_t>(part->size()) / channels;
        const Tensor out = output(TensorType::F32, n, channels);
        backend_->conv1d_causal(upload_f32(n, channels, *part), weight, state, out);
        const reference::Matrix want = reference::conv1d_causal(to_double(*part), channels, to_double(w), kernel, ref_state);
        expect_close(download(out), want, 1e-6, "conv1d");
        expect_close(download(state), ref_state, 1e-7, "conv1d state");
    }
}

TEST_P(BackendOps, DeltaRuleRecurrentChunkedAndSnapshots) {
    const int hk = 2, hv = 4, dk = 16, dv = 8;
    const int64_t tokens = 150;  // several chunks and a partial one
    const std::vector<float> q = random(tokens * hk * dk), v = random(tokens * hv * dv), b0 = random(tokens * hv);
    std::vector<float> k = random(tokens * hk * dk), g(tokens * hv), beta(tokens * hv);
    for (int64_t t = 0; t < tokens; ++t)
        for (int h = 0; h < hk; ++h) {  // unit keys, as after the L2 norm
            double ss = 0;
            for (int i = 0; i < dk; ++i) ss += k[t * hk * dk + h * dk + i] * k[t * hk * dk + h * dk + i];
            for (int i = 0; i < dk; ++i) k[t * hk * dk + h * dk + i] /= static_cast<float>(std::sqrt(ss));
        }
    std::uniform_real_distribution<float> decay(-0.3f, 0.0f), unit(0.0f, 1.0f);
    for (float& x : g) x = decay(rng_);
    for (float& x : beta) x = unit(rng_);
    const std::vector<float> s0 = random(hv * dk * dv, 0.3f);
    reference::Matrix ref_state = to_double(s0);
    reference::Matrix ref_snaps;
    const reference::Matrix want = reference::delta_rule(to_double(q), to_double(k), to_double(v), to_double(g),
                                                         to_double(beta), ref_state, tokens, hk, hv, dk, dv, 0.25,
                                                         3, &ref_snaps);
    for (int chunk : {0, 64, 16}) {
        DeltaRuleArgs a;
        // q and k as strided column views of one fused row, as the model lays them out.
        std::vector<float> fused(tokens * 2 * hk * dk);
        for (int64_t t = 0; t < tokens; ++t) {
            std::copy(q.begin() + t * hk * dk, q.begin() + (t + 1) * hk * dk, fused.begin() + t * 2 * hk * dk);
            std::copy(k.begin() + t * hk * dk, k.begin() + (t + 1) * hk * dk, fused.begin() + t * 2 * hk * dk + hk * dk);
        }
        const Tensor qk = upload_f32(tokens, 2 * hk * dk, fused);
        a.q = qk.column_range(0, hk * dk);
        a.k = qk.column_range(hk * dk, hk * dk);
        a.v = upload_f32(tokens, hv * dv, v);
        a.g = upload_f32(tokens, hv, g);
        a.beta = upload_f32(tokens, hv, beta);
        a.state = upload_f32(hv, dk * dv, s0);
        a.out = output(TensorType::F32, tokens, hv * dv);
        const Tensor snaps = output(TensorType::F32, 3, hv * dk * dv);
        a.snapshots = &snaps;
        a.n_k_heads = hk;
        a.n_v_heads = hv;
        a.d_k = dk;
        a.d_v = dv;
        a.q_scale = 0.25f;
        a.chunk_size = chunk;
        backend_->delta_rule(a);
        const std::string what = "delta_rule chunk " + std::to_string(chunk);
        expect_close(download(a.out), want, 2e-5, what.c_str());
        expect_close(download(a.state), ref_state, 2e-5, (what + " state").c_str());
        expect_close(download(snaps), ref_snaps, 2e-5, (what + " snapshots").c_str());
    }
}

TEST_P(BackendOps, DeltaRuleFullSizeHeads) {
    // Qwen3.6's head size (d_k = d_v = 128) over one decode token and over a verify-like batch with snapshots,
    // and a small size that no lane count divides.
    struct Case {
        int hk, hv, dk, dv;
        int64_t tokens, snaps;
    };
    for (const Case& c : {Case{2, 4, 128, 128, 1, 1}, Case{2, 4, 128, 128, 6, 3}, Case{1, 2, 20, 12, 5, 2}}) {
        const int64_t tokens = c.tokens, qk_cols = int64_t{c.hk} * c.dk, v_cols = int64_t{c.hv} * c.dv;
        const std::vector<float> q = random(tokens * qk_cols), v = random(tokens * v_cols);
        std::vector<float> k = random(tokens * qk_cols), g(static_cast<size_t>(tokens * c.hv)),
                           beta(static_cast<size_t>(tokens * c.hv));
        for (int64_t r = 0; r < tokens * c.hk; ++r) {  // unit keys, as after the L2 norm
            double ss = 0;
            for (int i = 0; i < c.dk; ++i) ss += double{k[r * c.dk + i]} * k[r * c.dk + i];
            for (int i = 0; i < c.dk; ++i) k[r * c.dk + i] /= static_cast<float>(std::sqrt(ss));
        }
        std::uniform_real_distribution<float> decay(-0.3f, 0.0f), unit(0.0f, 1.0f);
        for (float& x : g) x = decay(rng_);
        for (float& x : beta) x = unit(rng_);
        const std::vector<float> s0 = random(static_cast<size_t>(c.hv) * c.dk * c.dv, 0.3f);
        reference::Matrix ref_state = to_double(s0), ref_snaps;
        const reference::Matrix want =
            reference::delta_rule(to_double(q), to_double(k), to_double(v), to_double(g), to_double(beta), ref_state,
                                  tokens, c.hk, c.hv, c.dk, c.dv, 0.0884, c.snaps, &ref_snaps);
        DeltaRuleArgs a;
        a.q = upload_f32(tokens, qk_cols, q);
        a.k = upload_f32(tokens, qk_cols, k);
        a.v = upload_f32(tokens, v_cols, v);
        a.g = upload_f32(tokens, c.hv, g);
        a.beta = upload_f32(tokens, c.hv, beta);
        a.state = upload_f32(c.hv, int64_t{c.dk} * c.dv, s0);
        a.out = output(TensorType::F32, tokens, v_cols);
        const Tensor snaps = output(TensorType::F32, c.snaps, int64_t{c.hv} * c.dk * c.dv);
        a.snapshots = &snaps;
        a.n_k_heads = c.hk;
        a.n_v_heads = c.hv;
        a.d_k = c.dk;
        a.d_v = c.dv;
        a.q_scale = 0.0884f;
        backend_->delta_rule(a);
        const std::string what = "delta_rule " + std::to_string(c.dk) + "x" + std::to_string(c.dv) + ", " +
                                 std::to_string(tokens) + " tokens";
        expect_close(download(a.out), want, 2e-5, what.c_str());
        expect_close(download(a.state), ref_state, 2e-5, (what + " state").c_str());
        expect_close(download(snaps), ref_snaps, 2e-5, (what + " snapshots").c_str());
    }
}

TEST_P(BackendOps, MoeRoutingExpertsAndCombine) {
    const int64_t tokens = 5, experts = 8, cols = 64, rows = 32;
    const int k = 3;
    const std::vector<float> logits = random(tokens * experts, 2.0f);
    const Tensor ids = output(TensorType::I32, tokens, k);
    const Tensor weights = output(TensorType::F32, tokens, k);
    backend_->moe_route(upload_f32(tokens, experts, logits), k, ids, weights);
    std::vector<int32_t> want_ids;
    reference::Matrix want_w;
    reference::moe_route(to_double(logits), experts, k, want_ids, want_w);
    std::vector<int32_t> got_ids(static_cast<size_t>(tokens * k));
    backend_->read(ids, std::as_writable_bytes(std::span(got_ids)));
    EXPECT_EQ(got_ids, want_ids);
    expect_close(download(weights), want_w, 1e-6, "routing weights");

    for (TensorType wt : {TensorType::F32, TensorType::Q8_0, TensorType::Q4_0_ROCMFP4_FAST, TensorType::Q4_0,
                          TensorType::Q4_0_ROCMFP4, TensorType::MXFP4}) {
        reference::Matrix w_stored;
        const Tensor w = upload(wt, experts * rows, cols, random(experts * rows * cols), &w_stored);
        expect_expert_products(w, w_stored, experts, rows, ids, want_ids, tokens, k,
                               wt == TensorType::F32 ? 1e-5 : 3e-2, std::string(gguf::traits(wt).name));
    }
    const std::vector<float> y = random(tokens * k * rows);
    const Tensor out = output(TensorType::F32, tokens, rows);
    backend_->moe_combine(upload_f32(tokens * k, rows, y), weights, out);
    reference::Matrix want(static_cast<size_t>(tokens * rows), 0.0);
    for (int64_t t = 0; t < tokens; ++t)
        for (int j = 0; j < k; ++j)
            for (int64_t r = 0; r < rows; ++r) want[t * rows + r] += want_w[t * k + j] * y[(t * k + j) * rows + r];
    expect_close(download(out), want, 1e-5, "moe_combine");
}

// Prefill-sized expert products: 200 tokens x 8 slots of 32 experts, skewed so that a few experts take most slots
// (several tiles of them) and four take none; and 80 tokens x 4 slots of 600 experts (more experts than a group
// pass has invocations; most get no slot). Rows and columns are not multiples of the tile sizes (F16: 97 columns,
// not even a multiple of 4).
TEST_P(BackendOps, ExpertsWithManySlotsSkewed) {
    struct Shape {
        int64_t tokens, experts, k;
    };
    const int64_t rows = 136;
    for (const Shape& shape : {Shape{200, 32, 8}, Shape{80, 600, 4}}) {
        const int64_t tokens = shape.tokens, experts = shape.experts, k = shape.k;
        std::vector<double> weight(static_cast<size_t>(experts), 0.0);  // the last four never chosen
        for (int64_t e = 0; e < experts - 4; ++e) weight[static_cast<size_t>(e)] = 1.0 / static_cast<double>(1 + e);
        std::discrete_distribution<int32_t> skewed(weight.begin(), weight.end());
        std::vector<int32_t> expert_ids;
        for (int64_t t = 0; t < tokens; ++t) {
            std::vector<int32_t> chosen;
            while (static_cast<int64_t>(chosen.size()) < k) {
                const int32_t e = skewed(rng_);
                if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) chosen.push_back(e);
            }
            expert_ids.insert(expert_ids.end(), chosen.begin(), chosen.end());
        }
        const Tensor ids = output(TensorType::I32, tokens, k);
        backend_->write(ids, std::as_bytes(std::span(expert_ids)));

        for (TensorType wt : {TensorType::F16, TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_0_ROCMFP4,
                              TensorType::Q4_0_ROCMFP4_FAST, TensorType::Q4_K, TensorType::MXFP4}) {
            // Many experts make many weights to quantize: two types are enough there.
            if (experts > 32 && wt != TensorType::F16 && wt != TensorType::Q4_0) continue;
            // Rows of 160 and 96: not multiples of the 64-column tiles (the HIP/CUDA backend takes multiples of 32).
            const int64_t cols = wt == TensorType::F16 ? 160 : wt == TensorType::Q4_K ? 256 : 96;
            reference::Matrix w_stored;
            const Tensor w = upload(wt, experts * rows, cols, random(experts * rows * cols), &w_stored);
            expect_expert_products(w, w_stored, experts, rows, ids, expert_ids, tokens, static_cast<int>(k),
                                   wt == TensorType::F16 ? 1e-5 : 3e-2,
                                   std::string(gguf::traits(wt).name) + " " + std::to_string(experts) + " experts");
        }
    }
}

// Prefill-sized expert products whose slots all go to one or two experts, the others getting none: the grouped
// products cut each busy expert's slots into many tiles (HIP/CUDA: of 16, 32 or 64 slots; Vulkan: of 32). The
// busy experts include the first and the last one.
TEST_P(BackendOps, ExpertsWithAllSlotsOnFewExperts) {
    struct Shape {
        int64_t tokens, experts;
        std::vector<int32_t> busy;  // token t's k slots: busy rotated by t
    };
    const int64_t rows = 72, cols = 128;
    for (const Shape& shape : {Shape{300, 6, {3}}, Shape{200, 8, {5, 2}}, Shape{160, 16, {0, 15}}}) {
        const int64_t tokens = shape.tokens, experts = shape.experts;
        const int k = static_cast<int>(shape.busy.size());
        std::vector<int32_t> expert_ids;
        for (int64_t t = 0; t < tokens; ++t)
            for (int j = 0; j < k; ++j) expert_ids.push_back(shape.busy[static_cast<size_t>((t + j) % k)]);
        const Tensor ids = output(TensorType::I32, tokens, k);
        backend_->write(ids, std::as_bytes(std::span(expert_ids)));
        for (TensorType wt : {TensorType::F16, TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_0_ROCMFP4,
                              TensorType::MXFP4}) {
            reference::Matrix w_stored;
            const Tensor w = upload(wt, experts * rows, cols, random(experts * rows * cols), &w_stored);
            const std::string what = std::string(gguf::traits(wt).name) + ", " + std::to_string(tokens * k) +
                                     " slots on " + std::to_string(k) + " of " + std::to_string(experts) + " experts";
            expect_expert_products(w, w_stored, experts, rows, ids, expert_ids, tokens, k,
                                   wt == TensorType::F16 ? 1e-5 : 3e-2, what);
        }
    }
}

// Inputs of the gated products: unit values, except for swiglu_clamped products of about 6 (a quarter of them
// beyond the limits of +-7, where the clamps act). Far larger ones would saturate the clamped outputs (at most 56)
// while the 8-bit activations' error of the products grows with them, an error the clamped outputs' bound no longer
// hides behind the tolerance.
float gated_input_scale(Activation act, int64_t cols) {
    return act == Activation::swiglu_clamped ? 6.0f / std::sqrt(static_cast<float>(cols)) : 1.0f;
}

// matmul_gated and matmul_experts_gated (act(x W_gate^T, x W_up^T)) over the decode weight types, for 1, 5, 13 and
// 40 tokens (40: a prompt's tiles) and every activation, against the reference's products and gated activation. A
// kernel that dropped the activation or swapped gate and up would be off by far more than the tolerance.
TEST_P(BackendOps, GatedProductsOfDecodeTypes) {
    const int64_t cols = 512, rows = 33;
    for (TensorType wt : {TensorType::F32, TensorType::F16, TensorType::Q8_0, TensorType::Q4_0,
                          TensorType::Q4_0_ROCMFP4, TensorType::Q4_0_ROCMFP4_FAST, TensorType::Q4_K,
                          TensorType::MXFP4}) {
        reference::Matrix g_stored, u_stored;
        const Tensor wg = upload(wt, rows, cols, random(rows * cols), &g_stored);
        const Tensor wu = upload(wt, rows, cols, random(rows * cols), &u_stored);
        const double tolerance = gguf::traits(wt).quantized ? 3e-2 : 1e-5;
        for (int64_t tokens : {1, 5, 13, 40})
            for (Activation act : {Activation::silu, Activation::gelu, Activation::swiglu_clamped}) {
                const std::vector<float> x = random(tokens * cols, gated_input_scale(act, cols));
                const Tensor out = output(TensorType::F32, tokens, rows);
                backend_->matmul_gated(act, wg, wu, upload_f32(tokens, cols, x), output(TensorType::F32, tokens, rows),
                                       out);
                const reference::Matrix want =
                    reference::gated_activation(act, reference::matmul(g_stored, rows, cols, to_double(x), tokens),
                                                reference::matmul(u_stored, rows, cols, to_double(x), tokens));
                const std::string what = std::string(gguf::traits(wt).name) + ", " + std::to_string(tokens) +
                                         " tokens, " + activation_name(act);
                expect_close(download(out), want, tolerance, what.c_str());
            }
    }
    const Tensor w = upload(TensorType::Q4_0, rows, cols, random(rows * cols));
    const Tensor x = upload_f32(1, cols, random(cols));
    EXPECT_THROW(backend_->matmul_gated(Activation::silu, w, upload(TensorType::Q4_0, rows - 1, cols,
                                                                    random((rows - 1) * cols)),
                                        x, output(TensorType::F32, 1, rows), output(TensorType::F32, 1, rows)),
                 Error);
    EXPECT_THROW(backend_->matmul_gated(Activation::silu, w, w, x, output(TensorType::F32, 1, rows - 1),
                                        output(TensorType::F32, 1, rows)),
                 Error);
}

TEST_P(BackendOps, GatedExpertProductsOfDecodeTypes) {
    const int64_t experts = 4, rows = 33, cols = 256;
    const int k = 2;
    for (TensorType wt : {TensorType::F32, TensorType::F16, TensorType::Q8_0, TensorType::Q4_0,
                          TensorType::Q4_0_ROCMFP4, TensorType::Q4_0_ROCMFP4_FAST, TensorType::Q4_K,
                          TensorType::MXFP4}) {
        reference::Matrix g_stored, u_stored;
        const Tensor wg = upload(wt, experts * rows, cols, random(experts * rows * cols), &g_stored);
        const Tensor wu = upload(wt, experts * rows, cols, random(experts * rows * cols), &u_stored);
        const double tolerance = gguf::traits(wt).quantized ? 3e-2 : 1e-5;
        // 13 tokens: a verify batch (the GPU backends' chunked mat x vec). 200 tokens (400 slots): the prefill form
        // (Q4_0, ROCmFP4 dual with its two scales per block, and gpt-oss's MXFP4).
        for (int64_t tokens : {1, 5, 13, 200}) {
            if (tokens == 200 && wt != TensorType::Q4_0 && wt != TensorType::Q4_0_ROCMFP4 && wt != TensorType::MXFP4)
                continue;
            std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(experts - 1));
            std::vector<int32_t> expert_ids(static_cast<size_t>(tokens * k));
            for (int32_t& e : expert_ids) e = pick(rng_);
            const Tensor ids = output(TensorType::I32, tokens, k);
            backend_->write(ids, std::as_bytes(std::span(expert_ids)));
            for (bool per_slot : {false, true})
                for (Activation act : {Activation::silu, Activation::gelu, Activation::swiglu_clamped}) {
                    const int64_t x_rows = per_slot ? tokens * k : tokens;
                    const std::vector<float> x = random(x_rows * cols, gated_input_scale(act, cols));
                    const Tensor out = output(TensorType::F32, tokens * k, rows);
                    backend_->matmul_experts_gated(act, wg, wu, experts, upload_f32(x_rows, cols, x), ids,
                                                   output(TensorType::F32, tokens * k, rows), out);
                    const reference::Matrix want = reference::gated_activation(
                        act, reference::matmul_experts(g_stored, rows, cols, expert_ids, x, per_slot, k),
                        reference::matmul_experts(u_stored, rows, cols, expert_ids, x, per_slot, k));
                    const std::string what = std::string(gguf::traits(wt).name) + ", " + std::to_string(tokens) +
                                             " tokens, " + (per_slot ? "per slot, " : "per token, ") +
                                             activation_name(act);
                    expect_close(download(out), want, tolerance, what.c_str());
                }
        }
    }
}

TEST_P(BackendOps, MultiSectionRope) {
    const int head_dim = 64;
    const int64_t rows = 3;
    RopeParams p;
    p.mode = RopeMode::multi_interleaved;
    p.n_rot = 32;
    p.freq_base = 1e7f;
    p.sections[0] = 6;
    p.sections[1] = 5;
    p.sections[2] = 5;
    const std::vector<int32_t> positions = {4, 5, 6, 4, 9, 9, 4, 1, 2};  // t..., h..., w...
    const std::vector<float> x = random(rows * 2 * head_dim);
    const Tensor t = upload_f32(rows, 2 * head_dim, x);
    backend_->rope(t, head_dim, positions, p);
    reference::Matrix want = to_double(x);
    reference::rope(want, 2 * head_dim, head_dim, positions, p, {});
    expect_close(download(t), want, 1e-5, "imrope");
}

TEST_P(BackendOps, ShapeMistakesAreErrors) {
    const Tensor a = upload_f32(2, 32, random(64));
    EXPECT_THROW(backend_->matmul(upload_f32(4, 16, random(64)), a, output(TensorType::F32, 2, 4)), Error);
    EXPECT_THROW(backend_->add(a, upload_f32(2, 16, random(32)), a), Error);
    const int32_t positions[] = {0};
    EXPECT_THROW(backend_->rope(a, 32, positions, RopeParams{RopeMode::neox, 32, 1e4f, 1.0f}), Error);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, BackendOps, ::testing::ValuesIn(kBackends),
                         [](const ::testing::TestParamInfo<BackendCase>& p) { return p.param.name; });

#ifdef EMBER_TEST_VULKAN
// One block of 32 weights that are all exactly 1.0, written byte by byte.
std::vector<std::byte> block_of_ones(TensorType type) {
    std::vector<uint8_t> b;
    const auto fill = [&](size_t n, uint8_t v) { b.insert(b.end(), n, v); };
    switch (type) {
        case TensorType::Q4_0: b = {0x00, 0x3c}; fill(16, 0x99); break;  // d = 1, nibbles 9 = 1 + 8
        case TensorType::Q8_0: b = {0x00, 0x3c}; fill(32, 0x01); break;
        case TensorType::Q4_0_ROCMFP4: fill(16, 0x11); fill(2, 0x40); break;  // code 1 = 1, scale byte 0x40 = 1
        case TensorType::Q4_0_ROCMFP4_FAST: fill(16, 0x11); fill(1, 0x40); break;
        case TensorType::MXFP4: fill(1, 0x7f); fill(16, 0x22); break;  // scale 2^(127 - 127), code 2 = 1.0
        default: ADD_FAILURE() << "no block of ones for this type";
    }
    std::vector<std::byte> out(b.size());
    std::memcpy(out.data(), b.data(), b.size());
    return out;
}

// The integer dot product kernels run where the device has them, and only there: activations (127, 0.4, 0, ...)
// give 127.4 by the float kernels but 127 by the dot kernels, whose 8-bit activations round 0.4 away (d = 1).
TEST(VulkanIntegerDot, UsedExactlyWhereTheDeviceHasIt) {
    for (bool forced_off : {false, true}) {
        if (forced_off) setenv("EMBER_VULKAN_NO_INTEGER_DOT", "1", 1);
        const std::unique_ptr<Backend> backend = make_backend("vulkan");
        unsetenv("EMBER_VULKAN_NO_INTEGER_DOT");
        bool device_has_dot = false;
        for (const DeviceInfo& d : list_devices())
            if (d.backend == "vulkan" && backend->name() == "vulkan (" + d.name + ")")
                device_has_dot = std::find(d.features.begin(), d.features.end(), "integer dot product") !=
                                 d.features.end();
        const float want = device_has_dot && !forced_off ? 127.0f : 127.4f;
        std::vector<float> x(32, 0.0f);
        x[0] = 127.0f;
        x[1] = 0.4f;
        const int32_t expert = 1;
        std::vector<std::unique_ptr<Buffer>> buffers;
        const auto tensor = [&](TensorType type, int64_t rows, int64_t cols, std::span<const std::byte> bytes) {
            buffers.push_back(backend->allocate(bytes.size()));
            const Tensor t = make_tensor(*buffers.back(), type, rows, cols);
            backend->write(t, bytes);
            return t;
        };
        const Tensor tx = tensor(TensorType::F32, 1, 32, std::as_bytes(std::span(x)));
        const Tensor ids = tensor(TensorType::I32, 1, 1, std::as_bytes(std::span(&expert, 1)));
        for (TensorType type : {TensorType::Q4_0, TensorType::Q8_0, TensorType::Q4_0_ROCMFP4,
                                TensorType::Q4_0_ROCMFP4_FAST, TensorType::MXFP4}) {
            std::vector<std::byte> two_rows = block_of_ones(type);
            two_rows.insert(two_rows.end(), two_rows.begin(), two_rows.end());
            const Tensor w = tensor(type, 2, 32, two_rows);
            buffers.push_back(backend->allocate(8));
            const Tensor out = make_tensor(*buffers.back(), TensorType::F32, 1, 2);
            backend->matmul(w, tx, out);
            float got[2];
            backend->read(out, std::as_writable_bytes(std::span(got)));
            const std::string name(gguf::traits(type).name);
            EXPECT_NEAR(got[0], want, 1e-4) << name << (forced_off ? " forced off" : "");
            EXPECT_NEAR(got[1], want, 1e-4) << name << (forced_off ? " forced off" : "");
            const Tensor y = make_tensor(*buffers.back(), TensorType::F32, 1, 1);
            backend->matmul_experts(w, 2, tx, ids, y);
            backend->read(y, std::as_writable_bytes(std::span(got, 1)));
            EXPECT_NEAR(got[0], want, 1e-4) << name << " experts" << (forced_off ? " forced off" : "");
        }
    }
}
#endif

}  // namespace
