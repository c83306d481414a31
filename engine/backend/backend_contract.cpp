// SPDX-License-Identifier: MIT
// The one check of every Backend operation's arguments (shapes, element types, lengths, aliasing), made in the
// public entry points before the backend's own implementation runs. A failure is a bug in the caller (model code),
// reported as one ember::Error line naming the operation instead of corrupting memory.
#include <string>

#include "backend/backend_require.h"
#include "backend/rope_angle.h"
#include "backend/backend.h"
#include "ember/error.h"

namespace ember {

namespace {

using gguf::TensorType;

template <RequireMessage Message>
void require(bool ok, Message&& what) {
    require_or_throw(ok, "", std::forward<Message>(what));
}

std::string shape(const Tensor& t) {
    return std::to_string(t.rows) + "x" + std::to_string(t.cols);
}

void require_f32(const Tensor& t, const char* op, const char* role) {
    require(t.type == TensorType::F32, [&] { return std::string(op) + ": " + role + " must be f32"; });
}

void require_i32(const Tensor& t, const char* op, const char* role) {
    require(t.type == TensorType::I32, [&] { return std::string(op) + ": " + role + " must be I32"; });
}

void require_same_shape(const Tensor& a, const Tensor& b, const char* op) {
    require(a.rows == b.rows && a.cols == b.cols,
            [&] { return std::string(op) + ": shapes " + shape(a) + " and " + shape(b) + " differ"; });
}

// A vector of n values, stored as one row or one column.
void require_length(const Tensor& t, int64_t n, const char* op, const char* what) {
    require(t.rows * t.cols == n, [&] { return std::string(op) + ": " + what; });
}

bool same_start(const Tensor& a, const Tensor& b) {
    return a.buffer == b.buffer && a.offset == b.offset;
}

void require_matmul(const Tensor& w, const Tensor& x, const Tensor& out, const Tensor* bias, const char* op) {
    require_f32(x, op, "input");
    require_f32(out, op, "output");
    require(x.contiguous() && out.contiguous(), [&] { return std::string(op) + ": activations must be contiguous"; });
    require(x.cols == w.cols && out.cols == w.rows && out.rows == x.rows, [&] {
        return std::string(op) + ": shapes [" + shape(w) + "] x [" + shape(x) + "] -> [" + shape(out) +
               "] do not fit";
    });
    if (bias) {
        require_f32(*bias, op, "bias");
        require_length(*bias, w.rows, op, "bias length differs from the output width");
    }
}

void require_rms_norm(const Tensor& x, const Tensor& weight, const Tensor& out, const char* op) {
    require_f32(x, op, "input");
    require_f32(weight, op, "weight");
    require_f32(out, op, "output");
    require_same_shape(x, out, op);
    require_length(weight, x.cols, op, "weight length differs from the row length");
}

void require_conv1d(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out) {
    require_f32(x, "conv1d", "input");
    require_f32(weight, "conv1d", "weight");
    require_f32(state, "conv1d", "state");
    require_same_shape(x, out, "conv1d");
    const int64_t channels = x.cols, kernel = weight.cols;
    require(weight.rows == channels && kernel >= 1, "conv1d: weight must be [channels, kernel]");
    require(state.rows == kernel - 1 && state.cols == channels, "conv1d: state must be [kernel - 1, channels]");
    require(!same_start(out, x) || kernel == 1, "conv1d: out must not alias the input");
}

void require_moe_combine(const Tensor& y, const Tensor& weights, const Tensor& out) {
    require_f32(y, "moe_combine", "input");
    require_f32(weights, "moe_combine", "weights");
    require_f32(out, "moe_combine", "output");
    require(y.rows == out.rows * weights.cols && y.cols == out.cols && weights.rows == out.rows, "moe_combine: shapes");
}

void require_gated_shapes(const char* op, const Tensor& w_gate, const Tensor& w_up, const Tensor& x,
                          const Tensor& up_scratch, const Tensor& out) {
    require(w_gate.rows == w_up.rows && w_gate.cols == w_up.cols, [&] {
        return std::string(op) + ": gate weight [" + shape(w_gate) + "] and up weight [" + shape(w_up) +
               "] differ in shape";
    });
    require(up_scratch.rows == out.rows && up_scratch.cols == out.cols && up_scratch.type == TensorType::F32, [&] {
        return std::string(op) + ": up scratch [" + shape(up_scratch) + "] must be F32 shaped like the output [" +
               shape(out) + "]";
    });
    require(out.rows == 0 || (!same_start(out, x) && !same_start(up_scratch, x) && !same_start(out, up_scratch)),
            [&] { return std::string(op) + ": out and up scratch must not alias the input or each other"; });
}

void require_matmul_experts(const Tensor& w, int64_t n_experts, const Tensor& x, const Tensor& ids, const Tensor& out,
                            const char* op) {
    const auto message = [op](const char* what) { return [op, what] { return std::string(op) + ": " + what; }; };
    require_f32(x, op, "input");
    require_f32(out, op, "output");
    require_i32(ids, op, "ids");
    require(n_experts > 0 && w.rows % n_experts == 0, message("weight rows are not a multiple of the experts"));
    const int64_t tokens = ids.rows, k = ids.cols;
    require(x.cols == w.cols && (x.rows == tokens || x.rows == tokens * k), message("input shape"));
    require(out.rows == tokens * k && out.cols == w.rows / n_experts, message("output must be [tokens * k, rows]"));
    require(x.contiguous() && out.contiguous() && ids.contiguous(), message("activations and ids must be contiguous"));
}

void require_rms_norm_gated(const Tensor& x, const Tensor& weight, const Tensor& z, const Tensor& out) {
    require_rms_norm(x, weight, out, "gated rms_norm");
    require_f32(z, "gated rms_norm", "gate");
    require_same_shape(x, z, "gated rms_norm gate");
}

// The shared expert's term of a mixture-of-experts sum: F32 rows shaped like out, scaled by a one-column gate.
void require_shared_expert(const Tensor& shared, const Tensor& gate, const Tensor& out, const char* op) {
    require_f32(shared, op, "shared expert rows");
    require_f32(gate, op, "shared expert gate");
    require_same_shape(shared, out, op);
    require(gate.rows == out.rows && gate.cols == 1,
            [&] { return std::string(op) + ": the shared expert gate must be one column per token"; });
}

void require_deltanet_gates(const Tensor& beta, const Tensor& alpha, const Tensor& dt_bias, const Tensor& a) {
    for (const Tensor* t : {&beta, &alpha, &dt_bias, &a}) require_f32(*t, "deltanet_gates", "every tensor");
    require_same_shape(beta, alpha, "deltanet_gates");
    require(dt_bias.rows == 1 && dt_bias.cols == alpha.cols && a.rows == 1 && a.cols == alpha.cols,
            "deltanet_gates: dt_bias and a must be one row per value head");
}

void require_delta_rule(const DeltaRuleArgs& a) {
    const int64_t n = a.q.rows;
    require(a.n_k_heads > 0 && a.n_v_heads > 0 && a.d_k > 0 && a.d_v > 0, "delta_rule: bad head sizes");
    for (const Tensor* t : {&a.q, &a.k, &a.v, &a.g, &a.beta, &a.state, &a.out})
        require_f32(*t, "delta_rule", "every tensor");
    require(a.k.rows == n && a.v.rows == n && a.g.rows == n && a.beta.rows == n && a.out.rows == n,
            "delta_rule: every input needs one row per token");
    require(a.q.cols == int64_t{a.n_k_heads} * a.d_k && a.k.cols == a.q.cols, "delta_rule: q/k widths");
    require(a.v.cols == int64_t{a.n_v_heads} * a.d_v && a.out.cols == a.v.cols, "delta_rule: v/out widths");
    require(a.g.cols == a.n_v_heads && a.beta.cols == a.n_v_heads, "delta_rule: one g and beta per value head");
    const int64_t head_state = int64_t{a.d_k} * a.d_v;
    require(a.state.contiguous() && a.state.rows * a.state.cols == a.n_v_heads * head_state,
            "delta_rule: state must hold n_v_heads * d_k * d_v floats");
    require(a.chunk_size >= 0 && a.chunk_size <= 64, "delta_rule: chunk size must be 0 to 64");
    if (a.snapshots)
        require(a.snapshots->type == TensorType::F32 && a.snapshots->contiguous() && a.snapshots->rows <= n &&
                    a.snapshots->cols == a.n_v_heads * head_state,
                "delta_rule: snapshots must be [K <= T, n_v_heads * d_k * d_v]");
}

// Absent, or F32 with one logit per query head.
void require_attention_sinks(const AttentionParams& p) {
    require(!p.sinks || (p.sinks->type == TensorType::F32 && p.sinks->contiguous() &&
                         p.sinks->rows * p.sinks->cols == p.n_head),
            "attention: sinks must be F32 with one value per query head");
}

}  // namespace

void Backend::write(const Tensor& dst, std::span<const std::byte> src) {
    require(src.size() == dst.bytes(), "write: size mismatch");
    do_write(dst, src);
}

void Backend::read(const Tensor& src, std::span<std::byte> dst) {
    require(dst.size() == src.bytes(), "read: size mismatch");
    do_read(src, dst);
}

void Backend::get_rows(const Tensor& table, std::span<const int32_t> ids, const Tensor& out) {
    require_f32(out, "get_rows", "out");
    require(out.cols == table.cols && out.rows == static_cast<int64_t>(ids.size()), "get_rows: shape mismatch");
    for (int32_t id : ids)
        require(id >= 0 && id < table.rows, [&] {
            return "token id " + std::to_string(id) + " is outside the embedding table (" +
                   std::to_string(table.rows) + " rows)";
        });
    do_get_rows(table, ids, out);
}

void Backend::matmul(const Tensor& w, const Tensor& x, const Tensor& out, const Tensor* bias) {
    require_matmul(w, x, out, bias, "matmul");
    do_matmul(w, x, out, bias);
}

namespace {

void require_products(const Tensor& x, std::span<const Product> products, const char* op) {
    for (size_t i = 0; i < products.size(); ++i) {
        const Product& p = products[i];
        require(p.w != nullptr, [&] { return std::string(op) + ": a product without weights"; });
        require_matmul(*p.w, x, p.out, p.bias, op);
        bool aliased = x.rows > 0 && same_start(p.out, x);
        for (size_t j = 0; j < i; ++j) aliased = aliased || (x.rows > 0 && same_start(p.out, products[j].out));
        require(!aliased, [&] { return std::string(op) + ": an output aliases the input or another output"; });
    }
}

void require_route(const Tensor& logits, int k, const Tensor& ids, const Tensor& weights, const char* op) {
    require_f32(logits, op, "logits");
    require_i32(ids, op, "ids");
    require_f32(weights, op, "weights");
    require(k >= 1 && k <= logits.cols, [&] { return std::string(op) + ": k must be 1 to the expert count"; });
    require(ids.rows == logits.rows && ids.cols == k && weights.rows == logits.rows && weights.cols == k,
            [&] { return std::string(op) + ": ids and weights must be [tokens, k]"; });
}

}  // namespace

void Backend::matmul_many(const Tensor& x, std::span<const Product> products) {
    require_products(x, products, "matmul_many");
    do_matmul_many(x, products);
}

void Backend::rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) {
    require_rms_norm(x, weight, out, "rms_norm");
    do_rms_norm(x, weight, eps, out);
}

void Backend::add_rms_norm(const Tensor& x, const Tensor& y, const Tensor& weight, float eps, const Tensor& out) {
    require_rms_norm(x, weight, out, "add_rms_norm");
    require_f32(y, "add_rms_norm", "addend");
    require_same_shape(x, y, "add_rms_norm");
    require(x.rows == 0 || (!same_start(out, x) && !same_start(out, y)),
            "add_rms_norm: out must not alias the input or the addend");
    do_add_rms_norm(x, y, weight, eps, out);
}

void Backend::layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps, const Tensor& out) {
    require_f32(x, "layer_norm", "input");
    require_f32(weight, "layer_norm", "weight");
    require_f32(bias, "layer_norm", "bias");
    require_f32(out, "layer_norm", "output");
    require_same_shape(x, out, "layer_norm");
    require(weight.rows * weight.cols == x.cols && bias.rows * bias.cols == x.cols,
            "layer_norm: weight and bias need one value per column");
    do_layer_norm(x, weight, bias, eps, out);
}

void Backend::add(const Tensor& a, const Tensor& b, const Tensor& out) {
    require_f32(a, "add", "input");
    require_f32(b, "add", "input");
    require_same_shape(a, out, "add");
    require(b.cols == a.cols && (b.rows == a.rows || b.rows == 1), "add: operand shapes differ");
    do_add(a, b, out);
}

void Backend::mul(const Tensor& a, const Tensor& b, const Tensor& out) {
    require_f32(a, "mul", "input");
    require_f32(b, "mul", "input");
    require_same_shape(a, out, "mul");
    const bool column = b.cols == 1 && b.rows == a.rows;
    require(column || (b.cols == a.cols && (b.rows == a.rows || b.rows == 1)), "mul: operand shapes differ");
    do_mul(a, b, out);
}

void Backend::scale(const Tensor& x, float s, const Tensor& out) {
    require_f32(x, "scale", "input");
    require_same_shape(x, out, "scale");
    do_scale(x, s, out);
}

void Backend::gated_activation(Activation act, const Tensor& gate, const Tensor& up, const Tensor& out) {
    require_f32(gate, "gated activation", "gate");
    require_f32(up, "gated activation", "up");
    require_same_shape(gate, up, "gated activation");
    require_same_shape(gate, out, "gated activation");
    do_gated_activation(act, gate, up, out);
}

void Backend::rope(const Tensor& x, int head_dim, std::span<const int32_t> positions, const RopeParams& p,
                   const Tensor* freq_factors) {
    require_f32(x, "rope", "input");
    const size_t per_row = rope_angle::positions_per_row(p.mode);
    require(positions.size() == static_cast<size_t>(x.rows) * per_row,
            per_row == 3   ? "rope: three positions (t, h, w) per row"
            : per_row == 2 ? "rope: two positions (row, col) per row"
                           : "rope: one position per row");
    require(head_dim > 0 && x.cols % head_dim == 0, "rope: row length is not a multiple of the head size");
    require(rope_angle::valid_n_rot(p, head_dim), "rope: bad rotary dimension count");
    if (freq_factors) {
        require_f32(*freq_factors, "rope", "frequency factors");
        require_length(*freq_factors, p.n_rot / 2, "rope", "need n_rot/2 frequency factors");
    }
    do_rope(x, head_dim, positions, p, freq_factors);
}

void Backend::store_kv(const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,
                       std::span<const int32_t> positions) {
    require_f32(k, "store_kv", "k");
    require_f32(v, "store_kv", "v");
    require(k.cols == k_cache.cols && v.cols == v_cache.cols, "store_kv: row length differs from the cache");
    require(static_cast<int64_t>(positions.size()) == k.rows && k.rows == v.rows, "store_kv: one position per row");
    for (int32_t pos : positions)
        require(pos >= 0 && pos < k_cache.rows && pos < v_cache.rows, [&] {
            return "store_kv: position " + std::to_string(pos) + " is outside the cache (" +
                   std::to_string(k_cache.rows) + " rows)";
        });
    do_store_kv(k, v, k_cache, v_cache, positions);
}

void Backend::attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache, int64_t n_kv,
                        std::span<const int32_t> positions, const AttentionParams& p, const Tensor& out) {
    require_f32(q, "attention", "q");
    require_f32(out, "attention", "out");
    require(p.head_dim > 0 && p.head_dim <= 512, "attention: head size out of range");
    require(p.n_head > 0 && p.n_head_kv > 0 && p.n_head % p.n_head_kv == 0, "attention: bad head counts");
    require(q.cols == int64_t{p.n_head} * p.head_dim && out.cols == q.cols && out.rows == q.rows,
            "attention: q/out shape does not match the heads");
    require(k_cache.cols == int64_t{p.n_head_kv} * p.head_dim && v_cache.cols == k_cache.cols,
            "attention: cache rows do not match the kv heads");
    require(k_cache.type == v_cache.type, "attention: k and v caches differ in type");
    require(
        n_kv >= 0 && n_kv <= k_cache.rows && n_kv <= v_cache.rows && static_cast<int64_t>(positions.size()) == q.rows,
        "attention: bad lengths");
    require(p.window >= 0, "attention: negative window");
    require_attention_sinks(p);
    do_attention(q, k_cache, v_cache, n_kv, positions, p, out);
}

void Backend::softmax(const Tensor& x) {
    require_f32(x, "softmax", "input");
    do_softmax(x);
}

void Backend::unary(UnaryOp op, const Tensor& x, const Tensor& out) {
    require_f32(x, "unary", "input");
    require_f32(out, "unary", "output");
    require_same_shape(x, out, "unary");
    do_unary(op, x, out);
}

void Backend::l2_norm(const Tensor& x, int head_dim, float eps, const Tensor& out) {
    require_f32(x, "l2_norm", "input");
    require_same_shape(x, out, "l2_norm");
    require(head_dim > 0 && x.cols % head_dim == 0, "l2_norm: row length is not a multiple of the head size");
    do_l2_norm(x, head_dim, eps, out);
}

void Backend::rms_norm_gated(const Tensor& x, const Tensor& weight, const Tensor& z, float eps, const Tensor& out) {
    require_rms_norm_gated(x, weight, z, out);
    do_rms_norm_gated(x, weight, z, eps, out);
}

void Backend::conv1d_causal(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out) {
    require_conv1d(x, weight, state, out);
    do_conv1d_causal(x, weight, state, out);
}

void Backend::conv1d_causal_silu(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out) {
    require_conv1d(x, weight, state, out);
    do_conv1d_causal_silu(x, weight, state, out);
}

void Backend::deltanet_gates(const Tensor& beta, const Tensor& alpha, const Tensor& dt_bias, const Tensor& a) {
    require_deltanet_gates(beta, alpha, dt_bias, a);
    do_deltanet_gates(beta, alpha, dt_bias, a);
}

void Backend::delta_rule(const DeltaRuleArgs& a) {
    require_delta_rule(a);
    do_delta_rule(a);
}

void Backend::deltanet_recurrent(const DeltaNetArgs& a) {
    const DeltaRuleArgs& r = a.rule;
    require_delta_rule(r);
    require(r.chunk_size == 0, "deltanet_recurrent: the token-by-token form only (chunk size 0)");
    require_conv1d(a.mix, a.conv_weight, a.conv_state, a.conv);
    const auto inside_conv = [&](const Tensor& t) {
        return t.buffer == a.conv.buffer && t.row_stride == a.conv.row_stride && t.rows == a.conv.rows &&
               t.offset >= a.conv.offset &&
               t.offset + t.cols * sizeof(float) <= a.conv.offset + a.conv.cols * sizeof(float);
    };
    require(inside_conv(r.q) && inside_conv(r.k) && inside_conv(r.v),
            "deltanet_recurrent: q, k and v must be column ranges of the convolution's output");
    require_deltanet_gates(r.beta, r.g, a.dt_bias, a.a);
    require_rms_norm_gated(r.out.reshaped(r.d_v), a.norm, a.z.reshaped(r.d_v), r.out.reshaped(r.d_v));
    do_deltanet_recurrent(a);
}

void Backend::moe_route(const Tensor& logits, int k, const Tensor& ids, const Tensor& weights) {
    require_route(logits, k, ids, weights, "moe_route");
    do_moe_route(logits, k, ids, weights);
}

void Backend::matmul_add_rms_norm(const Tensor& w, const Tensor& x, const Tensor& out, const Tensor* bias,
                                  const Tensor& residual, const Tensor& norm, float eps, const Tensor& norm_out) {
    constexpr const char* op = "matmul_add_rms_norm";
    require_matmul(w, x, out, bias, op);
    require_rms_norm(residual, norm, norm_out, op);
    require_same_shape(residual, out, op);
    require(x.rows == 0 || (!same_start(out, x) && !same_start(norm_out, out) && !same_start(norm_out, residual) &&
                            !same_start(residual, out) && !same_start(residual, x)),
            "matmul_add_rms_norm: an output aliases the input or another output");
    do_matmul_add_rms_norm(w, x, out, bias, residual, norm, eps, norm_out);
}

void Backend::moe_router(const MoeRouterArgs& a) {
    constexpr const char* op = "moe_router";
    require(a.router != nullptr, "moe_router: no router weights");
    const Product products[] = {{a.router, a.logits, a.router_bias}, {a.shared_gate_weight, a.shared_gate}};
    require_products(a.x, std::span(products, a.shared_gate_weight ? 2 : 1), op);
    require_route(a.logits, a.k, a.ids, a.weights, op);
    require(a.x.rows == 0 || (!same_start(a.ids, a.logits) && !same_start(a.weights, a.logits) &&
                              !same_start(a.ids, a.weights) && !same_start(a.ids, a.x) && !same_start(a.weights, a.x)),
            "moe_router: an output aliases the input or another output");
    do_moe_router(a);
}

void Backend::matmul_experts(const Tensor& w, int64_t n_experts, const Tensor& x, const Tensor& ids,
                             const Tensor& out) {
    require_matmul_experts(w, n_experts, x, ids, out, "matmul_experts");
    do_matmul_experts(w, n_experts, x, ids, out);
}

void Backend::matmul_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, const Tensor& x,
                           const Tensor& up_scratch, const Tensor& out) {
    require_gated_shapes("matmul_gated", w_gate, w_up, x, up_scratch, out);
    do_matmul_gated(act, w_gate, w_up, x, up_scratch, out);
}

void Backend::matmul_experts_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, int64_t n_experts,
                                   const Tensor& x, const Tensor& ids, const Tensor& up_scratch, const Tensor& out) {
    require_gated_shapes("matmul_experts_gated", w_gate, w_up, x, up_scratch, out);
    require_matmul_experts(w_gate, n_experts, x, ids, out, "matmul_experts_gated");
    do_matmul_experts_gated(act, w_gate, w_up, n_experts, x, ids, up_scratch, out);
}

void Backend::add_expert_bias(const Tensor& bias, const Tensor& ids, const Tensor& out) {
    require_f32(bias, "add_expert_bias", "bias");
    require_f32(out, "add_expert_bias", "output");
    require_i32(ids, "add_expert_bias", "ids");
    require(out.rows == ids.rows * ids.cols && out.cols == bias.cols,
            "add_expert_bias: output must be [tokens * k, bias cols]");
    do_add_expert_bias(bias, ids, out);
}

void Backend::moe_combine(const Tensor& y, const Tensor& weights, const Tensor& out) {
    require_moe_combine(y, weights, out);
    do_moe_combine(y, weights, out);
}

void Backend::moe_combine_shared(const Tensor& y, const Tensor& weights, const Tensor& shared, const Tensor& gate,
                                 const Tensor& out) {
    require_shared_expert(shared, gate, out, "moe_combine_shared");
    require(out.rows == 0 || (!same_start(out, shared) && !same_start(out, gate) && !same_start(out, y)),
            "moe_combine_shared: out must not alias its inputs");
    require_moe_combine(y, weights, out);
    do_moe_combine_shared(y, weights, shared, gate, out);
}

void Backend::moe_gate_up(const MoeGateUpArgs& a) {
    require(a.gate_exps && a.up_exps && a.shared_gate && a.shared_up, "moe_gate_up: a gate or up matrix is missing");
    require_gated_shapes("moe_gate_up", *a.gate_exps, *a.up_exps, a.x, a.up_scratch, a.out);
    require_matmul_experts(*a.gate_exps, a.n_experts, a.x, a.ids, a.out, "moe_gate_up");
    require_gated_shapes("moe_gate_up (shared expert)", *a.shared_gate, *a.shared_up, a.x, a.shared_up_scratch,
                         a.shared_out);
    require(a.out.rows == 0 || (!same_start(a.out, a.shared_out) && !same_start(a.out, a.shared_up_scratch) &&
                                !same_start(a.shared_out, a.up_scratch)),
            "moe_gate_up: the routed and the shared outputs must not alias");
    do_moe_gate_up(a);
}

void Backend::moe_down_combine(const MoeDownArgs& a) {
    constexpr const char* op = "moe_down_combine";
    require(a.down != nullptr, "moe_down_combine: no down weights");
    require_matmul_experts(*a.down, a.n_experts, a.act, a.ids, a.y, op);
    require_moe_combine(a.y, a.weights, a.out);
    require(a.ids.rows == a.out.rows && a.ids.cols == a.weights.cols, "moe_down_combine: ids and weights differ");
    bool aliased = same_start(a.out, a.act) || same_start(a.out, a.y) || same_start(a.out, a.weights);
    if (a.shared_down) {
        require_matmul(*a.shared_down, a.shared_act, a.shared_out, nullptr, op);
        require_shared_expert(a.shared_out, a.shared_gate, a.out, op);
        aliased = aliased || same_start(a.out, a.shared_act) || same_start(a.out, a.shared_out) ||
                  same_start(a.out, a.shared_gate);
    }
    require(a.out.rows == 0 || !aliased, "moe_down_combine: out must not alias the other tensors");
    if (a.norm) {
        require_rms_norm(a.residual, *a.norm, a.norm_out, op);
        require_same_shape(a.residual, a.out, op);
        require(a.out.rows == 0 || (!same_start(a.norm_out, a.residual) && !same_start(a.norm_out, a.out) &&
                                    !same_start(a.residual, a.out)),
                "moe_down_combine: the residual, the norm's output and out must not alias");
    }
    do_moe_down_combine(a);
}

void Backend::convert(const Tensor& x, const Tensor& out) {
    require(x.rows == out.rows && x.cols == out.cols, "convert: shape mismatch");
    do_convert(x, out);
}

}  // namespace ember
