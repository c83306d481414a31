// SPDX-License-Identifier: MIT
// The backend interface: buffers on a device and the operations a forward pass needs. Model code is written once
// against it; each backend (CPU, Vulkan, HIP) implements it and may fuse or reorder internally, but every
// operation must give the result of the plain reference in tests/backend (the op suite runs on every backend).
//
// Tensors here are 2-D views: `rows` rows of `cols` elements of one type, rows `row_stride` bytes apart. Weights
// keep GGUF's layout (a row is shape[0] weights, i.e. one output feature's input weights). Activations are F32
// [tokens, features]. Nothing here knows about models, files or threads other than the backend's own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ember/devices.h"
#include "ember/gguf.h"

namespace ember {

class Buffer {
public:
    virtual ~Buffer() = default;
    virtual size_t size() const = 0;
    // Host-visible memory of the buffer, or nullptr where the device keeps it to itself.
    virtual std::byte* host() = 0;
};

struct Tensor {
    Buffer* buffer = nullptr;
    size_t offset = 0;
    gguf::TensorType type = gguf::TensorType::F32;
    int64_t rows = 0;
    int64_t cols = 0;
    size_t row_stride = 0;  // bytes between rows

    // Rows [first, first + n) of this tensor.
    Tensor row_range(int64_t first, int64_t n) const {
        Tensor t = *this;
        t.offset += static_cast<size_t>(first) * row_stride;
        t.rows = n;
        return t;
    }
    // Columns [first, first + n) of every row (a strided view; element types with one element per block only).
    Tensor column_range(int64_t first, int64_t n) const;
    // The same bytes seen as rows of `new_cols` elements (contiguous tensors only).
    Tensor reshaped(int64_t new_cols) const;
    size_t bytes() const { return static_cast<size_t>(rows) * row_stride; }
    bool contiguous() const;
};

// normal: pairs (2i, 2i+1). neox: pairs (i, i + n_rot/2). multi_interleaved (Qwen3-VL's IMRoPE): NeoX pairs whose
// position comes from one of the axes t, h, w: pair j uses h if j % 3 == 1 and j < 3 * sections[1], w if
// j % 3 == 2 and j < 3 * sections[2], else t; positions then hold 3 values per row, axis-major ([t...][h...][w...]).
// vision (the 2-D RoPE of a vision encoder, ../specs/vision-qwen3vl.md §5.3.2): NeoX pairs (j, j + n_rot/2); with
// q = n_rot/4, pair j < q turns by row · base^(-j/q) and pair j >= q by col · base^(-(j - q)/q); positions hold 2
// values per row, axis-major ([row...][col...]).
enum class RopeMode { normal, neox, multi_interleaved, vision };

struct RopeParams {
    RopeMode mode = RopeMode::normal;
    int n_rot = 0;            // rotated dimensions per head (<= head_dim; partial RoPE rotates the first n_rot)
    float freq_base = 10000.0f;
    float freq_scale = 1.0f;  // linear position scaling
    int sections[4] = {0, 0, 0, 0};  // multi_interleaved only
};

struct AttentionParams {
    int n_head = 0;
    int n_head_kv = 0;
    int head_dim = 0;
    float scale = 0.0f;       // usually 1/sqrt(head_dim)
    // Sliding-window attention (Gemma 3's local layers): with window > 0, the query at position p sees only the
    // cache rows j with p - window < j <= p. 0: no window.
    int window = 0;
    // Attention sinks (gpt-oss): F32 [n_head], a logit per head that joins every query's softmax without a value:
    //   out = sum_j e^(s_j - m) v_j / (sum_j e^(s_j - m) + e^(sink_h - m)),  m = max(max_j s_j, sink_h)
    // (s_j the scaled scores; the sink is not scaled). nullptr: none.
    const Tensor* sinks = nullptr;
};

// The first cache row the query at `position` sees: 0, or the window's first row.
inline int64_t first_visible_row(int64_t position, const AttentionParams& p) {
    return p.window > 0 && position >= p.window ? position - p.window + 1 : 0;
}

// The gated activations act(gate, up) of feed-forward layers:
//   silu: silu(gate) * up;  gelu: gelu_tanh(gate) * up;
//   swiglu_clamped (gpt-oss): g = min(gate, 7), u = clamp(up, -7, 7): g * sigmoid(1.702 g) * (u + 1).
enum class Activation { silu, gelu, swiglu_clamped };
// gelu_tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); gelu_erf: 0.5 x (1 + erf(x / sqrt(2))).
enum class UnaryOp { silu, sigmoid, softplus, exp, gelu_tanh, gelu_erf };

// The gated delta rule over the tokens of a batch (Gated DeltaNet, ../specs/qwen35moe.md §5.4). Per value head p
// (which reads q/k head p % n_k_heads) with state S [d_k][d_v] (F32, row-major, heads one after another):
//   S = exp(g_t) S;  S += k_t (beta_t (v_t - S^T k_t))^T;  o_t = S^T (q_scale q_t)
// chunk_size 0 runs token by token (the decode and verify form); a positive size uses the chunked form, which
// gives the same result to rounding. With snapshots (rows = K), the state after each of the batch's last K tokens
// is also written, row j for token T - K + j.
struct DeltaRuleArgs {
    Tensor q, k;        // [T, n_k_heads * d_k] (may be strided column views)
    Tensor v;           // [T, n_v_heads * d_v]
    Tensor g;           // [T, n_v_heads] log decay (<= 0)
    Tensor beta;        // [T, n_v_heads]
    Tensor state;       // [n_v_heads, d_k * d_v], updated in place
    Tensor out;         // [T, n_v_heads * d_v]
    const Tensor* snapshots = nullptr;  // [K, n_v_heads * d_k * d_v]
    int n_k_heads = 0, n_v_heads = 0, d_k = 0, d_v = 0;
    float q_scale = 1.0f;
    int chunk_size = 0;
};

// One of the products of a shared input (Backend::matmul_many): out = x w^T (+ bias).
struct Product {
    const Tensor* w = nullptr;
    Tensor out;
    const Tensor* bias = nullptr;
};

// The router of a mixture-of-experts block and its shared expert's gate (Backend::moe_router).
struct MoeRouterArgs {
    Tensor x;                             // [T, cols]
    const Tensor* router = nullptr;       // [cols, n_experts]
    const Tensor* router_bias = nullptr;  // F32 [n_experts], or nullptr
    Tensor logits;                        // F32 [T, n_experts]
    int k = 0;
    Tensor ids;                                  // I32 [T, k]
    Tensor weights;                              // F32 [T, k]
    const Tensor* shared_gate_weight = nullptr;  // [cols, 1], or nullptr: no shared expert
    Tensor shared_gate;                          // F32 [T, 1]
};

// The gated products of a mixture-of-experts block with a shared expert (Backend::moe_gate_up).
struct MoeGateUpArgs {
    Activation act = Activation::silu;
    const Tensor* gate_exps = nullptr;  // n_experts matrices [cols, ffn] each
    const Tensor* up_exps = nullptr;
    int64_t n_experts = 0;
    Tensor x;                             // [T, cols] (or [T * k, cols]: a row per slot)
    Tensor ids;                           // I32 [T, k]
    Tensor up_scratch;                    // scratch [T * k, ffn]
    Tensor out;                           // [T * k, ffn]
    const Tensor* shared_gate = nullptr;  // [cols, shared ffn]
    const Tensor* shared_up = nullptr;
    Tensor shared_up_scratch;  // scratch [T, shared ffn]
    Tensor shared_out;         // [T, shared ffn]
};

// The end of a mixture-of-experts block (Backend::moe_down_combine): each slot's down product, their weighted sum,
// and an optional shared expert scaled by its per-token sigmoid gate.
struct MoeDownArgs {
    const Tensor* down = nullptr;  // n_experts matrices [cols, ffn]
    int64_t n_experts = 0;
    Tensor act;      // [T * k, ffn] (or [T, ffn]: one row per token for all its slots)
    Tensor ids;      // I32 [T, k]
    Tensor weights;  // F32 [T, k]
    Tensor y;        // scratch [T * k, cols]
    const Tensor* shared_down = nullptr;  // [cols, shared ffn], or nullptr: no shared expert
    Tensor shared_act;   // [T, shared ffn]
    Tensor shared_gate;  // [T, 1]: the gate's logit
    Tensor shared_out;   // scratch [T, cols]
    Tensor out;          // [T, cols]
    // The residual norm after the block (norm non-null): residual [T, cols] += out, then norm_out = rms_norm(residual)
    // * norm, as add_rms_norm(residual, out, *norm, norm_eps, norm_out).
    const Tensor* norm = nullptr;  // [cols]
    Tensor residual;
    float norm_eps = 0.0f;
    Tensor norm_out;
};

// The recurrent Gated DeltaNet core of a decode or verify batch (Backend::deltanet_recurrent). rule.q, rule.k and
// rule.v are column ranges of conv; rule.beta and rule.g hold the raw beta and alpha products.
struct DeltaNetArgs {
    DeltaRuleArgs rule;   // chunk_size 0
    Tensor mix;           // [T, C]: the convolution's input
    Tensor conv_weight;   // [C, K]
    Tensor conv_state;    // [K - 1, C], updated
    Tensor conv;          // [T, C] scratch: the convolution's output
    Tensor dt_bias, a;    // one row of n_v_heads
    Tensor z;             // [T, n_v_heads * d_v]: the output gate
    Tensor norm;          // d_v values
    float l2_eps = 0.0f, norm_eps = 0.0f;
};

// Weight bytes the backend's matrix products have read (for tests that prove what a step touches).
struct BackendCounters {
    uint64_t weight_bytes = 0;         // all matmul and expert weights
    uint64_t expert_weight_bytes = 0;  // matmul_experts only
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;

    // --- memory ------------------------------------------------------------------------------------------------
    virtual std::unique_ptr<Buffer> allocate(size_t bytes) = 0;
    // A weight from the file mapping. The CPU backend uses the bytes in place; device backends copy them once.
    // The mapping outlives the returned buffer.
    virtual std::unique_ptr<Buffer> map_weights(std::span<const std::byte> bytes) = 0;
    // The expert matrices of a mixture-of-experts layer, which only matmul_experts(_gated) read: a backend may keep
    // them elsewhere than the other weights (the host-experts placement keeps them in host memory).
    virtual std::unique_ptr<Buffer> map_expert_weights(std::span<const std::byte> bytes) { return map_weights(bytes); }
    void write(const Tensor& dst, std::span<const std::byte> src);  // host -> tensor (contiguous)
    void read(const Tensor& src, std::span<std::byte> dst);         // tensor -> host (contiguous)
    virtual void synchronize() = 0;

    // --- operations (out may alias an input only where stated) --------------------------------------------------
    // out[i, :] = table[ids[i], :] converted to F32.
    void get_rows(const Tensor& table, std::span<const int32_t> ids, const Tensor& out);
    // out[t, r] = sum_k w[r, k] * x[t, k] (+ bias[r] when bias is given). x and out F32.
    void matmul(const Tensor& w, const Tensor& x, const Tensor& out, const Tensor* bias = nullptr);
    // The products of one input, as matmul(*p.w, x, p.out, p.bias) for each in order (a layer's projections: a
    // backend may read x once for all of them and run them together). No output may alias x or another output.
    void matmul_many(const Tensor& x, std::span<const Product> products);
    // out[i, :] = x[i, :] / rms(x[i, :]) * weight (weight has x.cols elements). out may alias x.
    void rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out);
    // A residual add and the norm after it: x += y (in place), then out = rms_norm(x) * weight. out must not alias
    // x or y.
    void add_rms_norm(const Tensor& x, const Tensor& y, const Tensor& weight, float eps, const Tensor& out);
    // LayerNorm: out[i, :] = (x[i, :] - mean) / sqrt(var + eps) * weight + bias, mean and (biased) variance over
    // the row; weight and bias F32 with x.cols elements. out may alias x.
    void layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps, const Tensor& out);
    // out = a + b; b may have one row (broadcast over a's rows). out may alias a.
    void add(const Tensor& a, const Tensor& b, const Tensor& out);
    // out = a * b elementwise; b may have one row (broadcast over rows) or one column (row r scaled by b[r, 0]).
    // out may alias a.
    void mul(const Tensor& a, const Tensor& b, const Tensor& out);
    void scale(const Tensor& x, float s, const Tensor& out);
    // out = act(gate, up) (Activation). out may alias gate.
    void gated_activation(Activation act, const Tensor& gate, const Tensor& up, const Tensor& out);
    // In place: rotates each head of x (rows = tokens, cols = n_heads * head_dim) at positions[row]. With
    // freq_factors (F32, n_rot/2 values), the angle of pair i is divided by freq_factors[i] (Llama 3 scaling).
    void rope(const Tensor& x, int head_dim, std::span<const int32_t> positions, const RopeParams& p,
              const Tensor* freq_factors = nullptr);
    // Writes rows of k and v (F32) into rows positions[i] of the caches (F16 or Q8_0 rows of n_head_kv*head_dim).
    void store_kv(const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,
                  std::span<const int32_t> positions);
    // Causal attention of q (rows = tokens at positions[i]) over cache rows [0, n_kv): each query sees cache rows
    // j <= positions[i] (every query at n_kv - 1: bidirectional attention, as a vision encoder needs), and with a
    // window only the last p.window of them.
    // out: [tokens, n_head * head_dim].
    void attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache, int64_t n_kv,
                   std::span<const int32_t> positions, const AttentionParams& p, const Tensor& out);
    // In place softmax of each row.
    void softmax(const Tensor& x);

    // --- operations of hybrid and mixture-of-experts models ----------------------------------------------------
    void unary(UnaryOp op, const Tensor& x, const Tensor& out);  // elementwise; out may alias x
    // Each run of head_dim elements of each row divided by max(its L2 norm, eps). out may alias x.
    void l2_norm(const Tensor& x, int head_dim, float eps, const Tensor& out);
    // out = rms_norm(x) * weight * silu(z), row by row (weight has x.cols elements). out may alias x.
    void rms_norm_gated(const Tensor& x, const Tensor& weight, const Tensor& z, float eps, const Tensor& out);
    // Causal depthwise convolution over time: out[t, c] = sum_k weight[c, k] * in[t - K + 1 + k, c], where the
    // K - 1 inputs before the batch come from state ([K - 1, C], oldest first, F32), which then holds the last
    // K - 1 inputs. weight: [C rows, K cols].
    void conv1d_causal(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out);
    // conv1d_causal, then silu on out (the Gated DeltaNet's convolution).
    void conv1d_causal_silu(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out);
    // The Gated DeltaNet's gates in place (../specs/qwen35moe.md §5.4 step 5); beta and alpha [T, H], dt_bias and a
    // one row of H: beta = sigmoid(beta); alpha = softplus(alpha + dt_bias) * a (the log decay g).
    void deltanet_gates(const Tensor& beta, const Tensor& alpha, const Tensor& dt_bias, const Tensor& a);
    void delta_rule(const DeltaRuleArgs& args);
    // The token-by-token Gated DeltaNet core (qwen35moe.md §5.4 steps 3-9), as the plain operations
    //   deltanet_gates(rule.beta, rule.g, dt_bias, a); conv1d_causal_silu(mix, conv_weight, conv_state, conv);
    //   l2_norm of rule.q and rule.k (heads of d_k, l2_eps); delta_rule(rule);
    //   rms_norm_gated(rule.out, norm, z, norm_eps, rule.out), both viewed as rows of d_v.
    // conv, rule.beta, rule.g, rule.q and rule.k are scratch afterwards (a backend that fuses the steps leaves them).
    void deltanet_recurrent(const DeltaNetArgs& a);
    // Per row of logits [T, E]: softmax over all E, the k most probable experts (ties to the lower index), their
    // probabilities renormalized to sum 1 (the sum clamped at >= 6.1035e-5). ids: I32 [T, k]; weights: F32 [T, k].
    void moe_route(const Tensor& logits, int k, const Tensor& ids, const Tensor& weights);
    // w holds n_experts matrices of w.rows / n_experts rows each. For token t and slot j:
    //   out[t * k + j, :] = W_{ids[t, j]} · x[r, :], with r = t when x has T rows, r = t * k + j when it has T * k.
    void matmul_experts(const Tensor& w, int64_t n_experts, const Tensor& x, const Tensor& ids, const Tensor& out);
    // The gated products of a feed-forward layer: out = act(x w_gate^T, x w_up^T), i.e.
    //   matmul(w_gate, x, out); matmul(w_up, x, up_scratch); gated_activation(act, out, up_scratch, out).
    // w_gate and w_up have the same shape; up_scratch is shaped like out (F32) and its contents afterwards are
    // unspecified: the default above uses it for the up product, a backend that fuses the three ignores it (so no
    // op allocates). out and up_scratch must not alias x or each other.
    void matmul_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, const Tensor& x,
                      const Tensor& up_scratch, const Tensor& out);
    // The same for expert matrices, slot by slot as matmul_experts (w_gate and w_up hold n_experts matrices each):
    //   out[t * k + j, :] = act(G_{ids[t, j]} · x[r, :], U_{ids[t, j]} · x[r, :]).
    void matmul_experts_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, int64_t n_experts,
                              const Tensor& x, const Tensor& ids, const Tensor& up_scratch, const Tensor& out);
    // Per-expert biases (gpt-oss): out[t * k + j, :] += bias[ids[t, j], :] for every slot; bias F32 [n_experts, cols],
    // ids I32 [T, k], out F32 [T * k, cols] (in place).
    void add_expert_bias(const Tensor& bias, const Tensor& ids, const Tensor& out);
    // out[t, :] = sum_j weights[t, j] * y[t * k + j, :]
    void moe_combine(const Tensor& y, const Tensor& weights, const Tensor& out);
    // moe_combine and a shared expert scaled by a per-token sigmoid gate (qwen35moe, §5.5 step 5):
    //   out[t, :] = sum_j weights[t, j] * y[t * k + j, :] + sigmoid(gate[t, 0]) * shared[t, :]
    // gate [T, 1] and shared [T, cols] are scratch (their contents afterwards are unspecified); out aliases neither.
    void moe_combine_shared(const Tensor& y, const Tensor& weights, const Tensor& shared, const Tensor& gate,
                            const Tensor& out);

    // The end of a mixture-of-experts block, as the plain operations
    //   matmul_experts(*down, n_experts, act, ids, y);
    //   matmul(*shared_down, shared_act, shared_out); moe_combine_shared(y, weights, shared_out, shared_gate, out)
    //   (without a shared expert: moe_combine(y, weights, out)), and with a norm add_rms_norm(residual, out, ...).
    // y, shared_out and shared_gate are scratch (their contents afterwards are unspecified: a backend that fuses the
    // steps ignores them, so no op allocates); out aliases none of the other tensors.
    void moe_down_combine(const MoeDownArgs& a);
    // The routed and the shared experts' gated products of a mixture-of-experts block, as the plain operations
    //   matmul_experts_gated(act, *gate_exps, *up_exps, n_experts, x, ids, up_scratch, out);
    //   matmul_gated(act, *shared_gate, *shared_up, x, shared_up_scratch, shared_out)
    // in one call, so that a backend may run both in one launch. The scratch tensors are as those operations'; out
    // and shared_out alias neither x nor each other.
    void moe_gate_up(const MoeGateUpArgs& a);
    // The router of a mixture-of-experts block, as the plain operations
    //   matmul_many(x, {{router, logits, router_bias}, {shared_gate_weight, shared_gate}})  (the second product only
    //   with a shared expert), then moe_route(logits, k, ids, weights)
    // in one call, so that a backend may route in the router product's launch. No output aliases x or another.
    void moe_router(const MoeRouterArgs& a);
    // A sub-layer's output projection, then the residual add and the norm after it, as the plain operations
    //   matmul(w, x, out, bias); add_rms_norm(residual, out, norm, eps, norm_out)
    // in one call, so that a backend may end the product's launch with the norm. No output aliases another or x.
    void matmul_add_rms_norm(const Tensor& w, const Tensor& x, const Tensor& out, const Tensor* bias,
                             const Tensor& residual, const Tensor& norm, float eps, const Tensor& norm_out);

    virtual BackendCounters counters() const { return {}; }
    // out (F32/F16/BF16/Q8_0 rows) = x converted.
    void convert(const Tensor& x, const Tensor& out);

protected:
    // The operations themselves, called by the entry points above once the arguments have passed the one check of
    // engine/backend/backend_contract.cpp (shapes, types, lengths, aliasing). An implementation checks only what is
    // its own (a type or size its device cannot handle). The fused operations (do_matmul_gated,
    // do_matmul_experts_gated, do_add_rms_norm, do_conv1d_causal_silu, do_deltanet_gates, do_moe_combine_shared,
    // do_moe_down_combine, do_moe_gate_up, do_moe_router, do_matmul_add_rms_norm, do_matmul_many,
    // do_deltanet_recurrent)
    // default to the plain operations they stand for (backend_fused_defaults.cpp).
    virtual void do_write(const Tensor& dst, std::span<const std::byte> src) = 0;
    virtual void do_read(const Tensor& src, std::span<std::byte> dst) = 0;
    virtual void do_get_rows(const Tensor& table, std::span<const int32_t> ids, const Tensor& out) = 0;
    virtual void do_matmul(const Tensor& w, const Tensor& x, const Tensor& out, const Tensor* bias) = 0;
    virtual void do_matmul_many(const Tensor& x, std::span<const Product> products);
    virtual void do_rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) = 0;
    virtual void do_add_rms_norm(const Tensor& x, const Tensor& y, const Tensor& weight, float eps, const Tensor& out);
    virtual void do_layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps,
                               const Tensor& out) = 0;
    virtual void do_add(const Tensor& a, const Tensor& b, const Tensor& out) = 0;
    virtual void do_mul(const Tensor& a, const Tensor& b, const Tensor& out) = 0;
    virtual void do_scale(const Tensor& x, float s, const Tensor& out) = 0;
    virtual void do_gated_activation(Activation act, const Tensor& gate, const Tensor& up, const Tensor& out) = 0;
    virtual void do_rope(const Tensor& x, int head_dim, std::span<const int32_t> positions, const RopeParams& p,
                         const Tensor* freq_factors) = 0;
    virtual void do_store_kv(const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,
                             std::span<const int32_t> positions) = 0;
    virtual void do_attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache, int64_t n_kv,
                              std::span<const int32_t> positions, const AttentionParams& p, const Tensor& out) = 0;
    virtual void do_softmax(const Tensor& x) = 0;
    virtual void do_unary(UnaryOp op, const Tensor& x, const Tensor& out) = 0;
    virtual void do_l2_norm(const Tensor& x, int head_dim, float eps, const Tensor& out) = 0;
    virtual void do_rms_norm_gated(const Tensor& x, const Tensor& weight, const Tensor& z, float eps,
                                   const Tensor& out) = 0;
    virtual void do_conv1d_causal(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out) = 0;
    virtual void do_conv1d_causal_silu(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out);
    virtual void do_deltanet_gates(const Tensor& beta, const Tensor& alpha, const Tensor& dt_bias, const Tensor& a);
    virtual void do_delta_rule(const DeltaRuleArgs& args) = 0;
    virtual void do_deltanet_recurrent(const DeltaNetArgs& a);
    virtual void do_moe_route(const Tensor& logits, int k, const Tensor& ids, const Tensor& weights) = 0;
    virtual void do_matmul_experts(const Tensor& w, int64_t n_experts, const Tensor& x, const Tensor& ids,
                                   const Tensor& out) = 0;
    virtual void do_matmul_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, const Tensor& x,
                                 const Tensor& up_scratch, const Tensor& out);
    virtual void do_matmul_experts_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, int64_t n_experts,
                                         const Tensor& x, const Tensor& ids, const Tensor& up_scratch,
                                         const Tensor& out);
    virtual void do_add_expert_bias(const Tensor& bias, const Tensor& ids, const Tensor& out) = 0;
    virtual void do_moe_combine(const Tensor& y, const Tensor& weights, const Tensor& out) = 0;
    virtual void do_moe_combine_shared(const Tensor& y, const Tensor& weights, const Tensor& shared, const Tensor& gate,
                                       const Tensor& out);
    virtual void do_moe_down_combine(const MoeDownArgs& a);
    virtual void do_moe_gate_up(const MoeGateUpArgs& a);
    virtual void do_moe_router(const MoeRouterArgs& a);
    virtual void do_matmul_add_rms_norm(const Tensor& w, const Tensor& x, const Tensor& out, const Tensor* bias,
                                        const Tensor& residual, const Tensor& norm, float eps, const Tensor& norm_out);
    virtual void do_convert(const Tensor& x, const Tensor& out) = 0;
};

struct CpuBackendOptions {
    int threads = 0;  // 0: all hardware threads
};

std::unique_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options = {});

// --- choosing a backend by name ---------------------------------------------------------------------------------
struct BackendOptions {
    int threads = 0;  // CPU backend threads; 0: all hardware threads
};

// "auto" (choose_device's pick for a model that fits); "cpu"; "vulkan" (the best Vulkan device: a GPU before a CPU
// implementation); "vulkan:N" (device N of
// list_devices()) or "vulkan:NAME" (the first device whose name contains NAME, case-insensitively); "cuda" /
// "hip" or "cuda:N" / "hip:N" (the HIP/CUDA backend on its device N, in EMBER_CUDA / EMBER_HIP builds). Throws
// ember::Error naming what is missing (no such backend in this build, no loader, no device).
std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& options = {});

// `device` runs every operation except the expert products whose weights came from map_expert_weights: those are
// kept in host memory and run on `host` (a CPU backend), their activations copied across.
std::unique_ptr<Backend> make_host_experts_backend(std::unique_ptr<Backend> device, std::unique_ptr<Backend> host);

// A tensor of `rows` x `cols` elements of `type` at the start of `buffer` (contiguous rows).
Tensor make_tensor(Buffer& buffer, gguf::TensorType type, int64_t rows, int64_t cols, size_t offset = 0);

}  // namespace ember
