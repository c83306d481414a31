// SPDX-License-Identifier: MIT
// The HIP/CUDA backend's row, elementwise, attention, recurrent and routing operations: argument checks on the
// host (misuse is an ember::Error at the call, as on the CPU), host arguments staged, launches recorded.
#include <cstring>

#include "backend/gpu/gpu_backend.h"
#include "backend/gpu/gpu_buffers.h"
#include "backend/gpu/gpu_key.h"

namespace ember::gpu_backend {

namespace gk = gpu_kernels;

namespace {

const int32_t* staged_ints(const std::byte* args, size_t off) { return reinterpret_cast<const int32_t*>(args + off); }

gk::Unary unary_of(UnaryOp op) {
    switch (op) {
        case UnaryOp::silu: return gk::Unary::silu;
        case UnaryOp::sigmoid: return gk::Unary::sigmoid;
        case UnaryOp::softplus: return gk::Unary::softplus;
        case UnaryOp::gelu_tanh:
            return gk::Unary::gelu;
        case UnaryOp::gelu_erf:
            return gk::Unary::gelu_erf;
        default: return gk::Unary::exp;
    }
}

}  // namespace

void GpuBackend::do_get_rows(const Tensor& table, std::span<const int32_t> ids, const Tensor& out) {
    const gk::Weights tv = weights_of(table, "get_rows table");
    const gk::Rows ov = f32_rows(out, "get_rows out");
    if (ids.empty()) return;
    const size_t off = stage(ids.data(), ids.size_bytes());
    record(launch_key("get_rows", tv, ov, off), [=](const gk::Launch& l, const std::byte* args) {
        gk::get_rows(l, tv, staged_ints(args, off), ov);
    });
}

void GpuBackend::do_rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) {
    const gk::Rows xv = f32_rows(x, "rms_norm input"), ov = f32_rows(out, "rms_norm output");
    const float* wv = f32_rows(weight, "rms_norm weight").data;
    std::byte* q = norm_output_blocks(ov);
    record_norm(launch_key("rms_norm", xv, wv, eps, ov, q),
                [=](const gk::Launch& l, const std::byte*) { gk::rms_norm(l, xv, wv, eps, ov, q); }, ov, q);
}

void GpuBackend::do_add_rms_norm(const Tensor& x, const Tensor& y, const Tensor& weight, float eps,
                                 const Tensor& out) {
    const gk::Rows xv = f32_rows(x, "add_rms_norm input"), yv = f32_rows(y, "add_rms_norm addend"),
                   ov = f32_rows(out, "add_rms_norm output");
    const float* wv = f32_rows(weight, "add_rms_norm weight").data;
    if (x.rows == 0) return;
    std::byte* q = norm_output_blocks(ov);
    record_norm(launch_key("add_rms_norm", xv, yv, wv, eps, ov, q),
                [=](const gk::Launch& l, const std::byte*) { gk::add_rms_norm(l, xv, yv, wv, eps, ov, q); }, ov, q);
}

void GpuBackend::do_layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps,
                               const Tensor& out) {
    const gk::Rows xv = f32_rows(x, "layer_norm input"), ov = f32_rows(out, "layer_norm output");
    const float* wv = f32_rows(weight, "layer_norm weight").data;
    const float* bv = f32_rows(bias, "layer_norm bias").data;
    if (x.rows == 0) return;
    record(launch_key("layer_norm", xv, wv, bv, eps, ov),
           [=](const gk::Launch& l, const std::byte*) { gk::layer_norm(l, xv, wv, bv, eps, ov); });
}

void GpuBackend::do_add(const Tensor& a, const Tensor& b, const Tensor& out) {
    const gk::Rows av = f32_rows(a, "add input"), bv = f32_rows(b, "add input"), ov = f32_rows(out, "add output");
    record(launch_key("add", av, bv, ov), [=](const gk::Launch& l, const std::byte*) { gk::add(l, av, bv, ov); });
}

void GpuBackend::do_mul(const Tensor& a, const Tensor& b, const Tensor& out) {
    const gk::Rows av = f32_rows(a, "mul input"), bv = f32_rows(b, "mul input"), ov = f32_rows(out, "mul output");
    record(launch_key("mul", av, bv, ov), [=](const gk::Launch& l, const std::byte*) { gk::mul(l, av, bv, ov); });
}

void GpuBackend::do_scale(const Tensor& x, float s, const Tensor& out) {
    const gk::Rows xv = f32_rows(x, "scale input"), ov = f32_rows(out, "scale output");
    record(launch_key("scale", xv, s, ov), [=](const gk::Launch& l, const std::byte*) { gk::scale(l, xv, s, ov); });
}

void GpuBackend::do_gated_activation(Activation act, const Tensor& gate, const Tensor& up, const Tensor& out) {
    const gk::Rows gv = f32_rows(gate, "gated activation gate"), uv = f32_rows(up, "gated activation up"),
                   ov = f32_rows(out, "gated activation output");
    const gk::Gated a = gated_of(act);
    record(launch_key("gated", a, gv, uv, ov),
           [=](const gk::Launch& l, const std::byte*) { gk::gated_activation(l, a, gv, uv, ov); });
}

void GpuBackend::do_unary(UnaryOp op, const Tensor& x, const Tensor& out) {
    const gk::Rows xv = f32_rows(x, "unary input"), ov = f32_rows(out, "unary output");
    const gk::Unary u = unary_of(op);
    record(launch_key("unary", u, xv, ov), [=](const gk::Launch& l, const std::byte*) { gk::unary(l, u, xv, ov); });
}

void GpuBackend::do_l2_norm(const Tensor& x, int head_dim, float eps, const Tensor& out) {
    const gk::Rows xv = f32_rows(x, "l2_norm input"), ov = f32_rows(out, "l2_norm output");
    record(launch_key("l2_norm", xv, head_dim, eps, ov),
           [=](const gk::Launch& l, const std::byte*) { gk::l2_norm(l, xv, head_dim, eps, ov); });
}

void GpuBackend::do_rms_norm_gated(const Tensor& x, const Tensor& weight, const Tensor& z, float eps,
                                   const Tensor& out) {
    const gk::Rows xv = f32_rows(x, "gated rms_norm input"), zv = f32_rows(z, "gated rms_norm gate"),
                   ov = f32_rows(out, "gated rms_norm output");
    const float* wv = f32_rows(weight, "gated rms_norm weight").data;
    std::byte* q = norm_output_blocks(ov);
    record_norm(launch_key("rms_norm_gated", xv, wv, zv, eps, ov, q),
                [=](const gk::Launch& l, const std::byte*) { gk::rms_norm_gated(l, xv, wv, zv, eps, ov, q); }, ov,
                q);
}

void GpuBackend::do_softmax(const Tensor& x) {
    const gk::Rows xv = f32_rows(x, "softmax input");
    record(launch_key("softmax", xv), [=](const gk::Launch& l, const std::byte*) { gk::softmax(l, xv); });
}

void GpuBackend::do_rope(const Tensor& x, int head_dim, std::span<const int32_t> positions, const RopeParams& p,
                         const Tensor* freq_factors) {
    const gk::Rows xv = f32_rows(x, "rope input");
    const float* fv = nullptr;
    if (freq_factors) {
        fv = f32_rows(*freq_factors, "rope frequency factors").data;
    }
    gk::RopeArgs a;
    a.head_dim = head_dim;
    a.n_rot = p.n_rot;
    a.mode = p.mode == RopeMode::normal ? 0 : p.mode == RopeMode::neox ? 1 : p.mode == RopeMode::vision ? 3 : 2;
    a.freq_base = p.freq_base;
    a.freq_scale = p.freq_scale;
    std::memcpy(a.sections, p.sections, sizeof a.sections);
    if (x.rows == 0) return;
    const size_t off = stage(positions.data(), positions.size_bytes());
    record(launch_key("rope", xv, fv, off, head_dim, a.n_rot, a.mode, a.freq_base, a.freq_scale, a.sections[0],
                      a.sections[1], a.sections[2]),
           [=](const gk::Launch& l, const std::byte* args) { gk::rope(l, xv, staged_ints(args, off), a, fv); });
}

void GpuBackend::do_store_kv(const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,
                             std::span<const int32_t> positions) {
    for (const Tensor* c : {&k_cache, &v_cache})
        require(c->type == gguf::TensorType::F32 || c->type == gguf::TensorType::F16 ||
                    c->type == gguf::TensorType::Q8_0,
                "store_kv: caches must be f32, f16 or q8_0");
    require((k_cache.type != gguf::TensorType::Q8_0 || k.cols % 32 == 0) &&
                (v_cache.type != gguf::TensorType::Q8_0 || v.cols % 32 == 0),
            "store_kv: q8_0 cache rows need a multiple of 32 elements");
    const gk::Rows kv = f32_rows(k, "store_kv k"), vv = f32_rows(v, "store_kv v");
    const gk::TypedRows kc = typed_rows(k_cache, "store_kv k cache"), vc = typed_rows(v_cache, "store_kv v cache");
    if (positions.empty()) return;
    const size_t off = stage(positions.data(), positions.size_bytes());
    record(launch_key("store_kv", kv, vv, kc, vc, off), [=](const gk::Launch& l, const std::byte* args) {
        gk::store_rows(l, kv, kc, staged_ints(args, off));
        gk::store_rows(l, vv, vc, staged_ints(args, off));
    });
}

void GpuBackend::do_attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache, int64_t n_kv,
                              std::span<const int32_t> positions, const AttentionParams& p, const Tensor& out) {
    require(k_cache.type == gguf::TensorType::F32 || k_cache.type == gguf::TensorType::F16 ||
                k_cache.type == gguf::TensorType::Q8_0,
            "attention: caches must be f32, f16 or q8_0");
    require(n_kv <= INT32_MAX, "attention: more cache rows than the kernels index");
    const gk::Rows qv = f32_rows(q, "attention q"), ov = f32_rows(out, "attention out");
    const gk::TypedRows kc = typed_rows(k_cache, "attention k cache"), vc = typed_rows(v_cache, "attention v cache");
    const float* sinks = p.sinks ? f32_rows(*p.sinks, "attention sinks").data : nullptr;
    const gk::AttentionArgs a{p.n_head, p.n_head_kv, p.head_dim, p.scale, p.window, sinks};
    if (q.rows == 0) return;
    auto* part = reinterpret_cast<float*>(
        scratch(kAttention, gk::attention_scratch_floats(ctx_->launch, q.rows, a) * sizeof(float)));
    // The cache length travels with the positions, so that a decode step's launches do not change with it.
    std::vector<int32_t> staged(positions.size() + 1);
    staged[0] = static_cast<int32_t>(n_kv);
    std::copy(positions.begin(), positions.end(), staged.begin() + 1);
    const size_t off = stage(staged.data(), staged.size() * sizeof(int32_t));
    record(launch_key("attention", qv, kc, vc, ov, off, a.n_head, a.n_head_kv, a.head_dim, a.scale, a.window, a.sinks,
                      part),
           [=](const gk::Launch& l, const std::byte* args) {
               const int32_t* s = staged_ints(args, off);
               gk::attention(l, qv, kc, vc, s, s + 1, a, ov, part);
           });
}

void GpuBackend::do_conv1d_causal(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out) {
    record_conv1d(x, weight, state, out, false);
}

void GpuBackend::do_conv1d_causal_silu(const Tensor& x, const Tensor& weight, const Tensor& state,
                                       const Tensor& out) {
    record_conv1d(x, weight, state, out, true);
}

void GpuBackend::record_conv1d(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out,
                               bool silu) {
    const int64_t kernel = weight.cols;
    require(kernel >= 2 && kernel <= 8, "conv1d: the kernels take 2 to 8 taps");
    const gk::Rows xv = f32_rows(x, "conv1d input"), wv = f32_rows(weight, "conv1d weight"),
                   sv = f32_rows(state, "conv1d state"), ov = f32_rows(out, "conv1d output");
    record(launch_key("conv1d", xv, wv, sv, ov, silu),
           [=](const gk::Launch& l, const std::byte*) { gk::conv1d_causal(l, xv, wv, sv, ov, silu); });
}

void GpuBackend::do_deltanet_gates(const Tensor& beta, const Tensor& alpha, const Tensor& dt_bias, const Tensor& a) {
    const gk::Rows bv = f32_rows(beta, "deltanet_gates beta"), av = f32_rows(alpha, "deltanet_gates alpha");
    const float* dv = f32_rows(dt_bias, "deltanet_gates dt_bias").data;
    const float* sv = f32_rows(a, "deltanet_gates a").data;
    if (alpha.rows == 0) return;
    record(launch_key("deltanet_gates", bv, av, dv, sv),
           [=](const gk::Launch& l, const std::byte*) { gk::deltanet_gates(l, bv, av, dv, sv); });
}

namespace {

gk::DeltaRuleArgs delta_rule_rows(const DeltaRuleArgs& args) {
    gk::DeltaRuleArgs a;
    a.q = f32_rows(args.q, "delta_rule q");
    a.k = f32_rows(args.k, "delta_rule k");
    a.v = f32_rows(args.v, "delta_rule v");
    a.g = f32_rows(args.g, "delta_rule g");
    a.beta = f32_rows(args.beta, "delta_rule beta");
    a.state = f32_rows(args.state, "delta_rule state");
    a.out = f32_rows(args.out, "delta_rule out");
    if (args.snapshots) {
        a.snapshots = f32_rows(*args.snapshots, "delta_rule snapshots").data;
        a.n_snapshots = args.snapshots->rows;
    }
    a.n_k_heads = args.n_k_heads;
    a.n_v_heads = args.n_v_heads;
    a.d_k = args.d_k;
    a.d_v = args.d_v;
    a.q_scale = args.q_scale;
    return a;
}

}  // namespace

void GpuBackend::do_delta_rule(const DeltaRuleArgs& args) {
    const int64_t T = args.q.rows;
    require(args.n_v_heads % args.n_k_heads == 0 && args.d_v <= 1024,
            "delta_rule: the kernels need value heads a multiple of the key heads and d_v <= 1024");
    const gk::DeltaRuleArgs a = delta_rule_rows(args);
    if (T == 0) return;
    record(launch_key("delta_rule", a.q, a.k, a.v, a.g, a.beta, a.state, a.out, a.snapshots, a.n_snapshots,
                      a.n_k_heads, a.n_v_heads, a.d_k, a.d_v, a.q_scale),
           [=](const gk::Launch& l, const std::byte*) { gk::delta_rule(l, a); });
}

void GpuBackend::do_deltanet_recurrent(const DeltaNetArgs& args) {
    const DeltaRuleArgs& r = args.rule;
    if (!gk::deltanet_recurrent_fits(r.n_k_heads, r.n_v_heads, r.d_k, r.d_v, static_cast<int>(args.conv_weight.cols)) ||
        !r.out.contiguous())
        return Backend::do_deltanet_recurrent(args);
    gk::DeltaNetStepArgs a;
    a.rule = delta_rule_rows(r);
    a.mix = f32_rows(args.mix, "deltanet_recurrent input");
    a.conv_weight = f32_rows(args.conv_weight, "deltanet_recurrent convolution weight");
    a.conv_state = f32_rows(args.conv_state, "deltanet_recurrent convolution state");
    a.z = f32_rows(args.z, "deltanet_recurrent gate");
    const gk::Rows conv = f32_rows(args.conv, "deltanet_recurrent convolution output");
    a.q_channel = a.rule.q.data - conv.data;  // the contract made them column ranges of conv
    a.k_channel = a.rule.k.data - conv.data;
    a.v_channel = a.rule.v.data - conv.data;
    a.dt_bias = f32_rows(args.dt_bias, "deltanet_recurrent dt_bias").data;
    a.a = f32_rows(args.a, "deltanet_recurrent a").data;
    a.norm = f32_rows(args.norm, "deltanet_recurrent norm").data;
    a.l2_eps = args.l2_eps;
    a.norm_eps = args.norm_eps;
    if (r.out.rows == 0) return;
    std::byte* q = norm_output_blocks(a.rule.out);
    a.q8_1 = q;
    record_norm(launch_key("deltanet_recurrent", a.rule.q, a.rule.k, a.rule.v, a.rule.g, a.rule.beta, a.rule.state,
                           a.rule.out, a.rule.snapshots, a.rule.n_snapshots, a.rule.n_k_heads, a.rule.n_v_heads,
                           a.rule.d_k, a.rule.d_v, a.rule.q_scale, a.mix, a.conv_weight, a.conv_state, a.z,
                           a.dt_bias, a.a, a.norm, a.l2_eps, a.norm_eps, q),
                [=](const gk::Launch& l, const std::byte*) { gk::deltanet_recurrent(l, a); }, a.rule.out, q);
}

void GpuBackend::do_moe_route(const Tensor& logits, int k, const Tensor& ids, const Tensor& weights) {
    const int64_t n_experts = logits.cols;
    require(k <= 64, "moe_route: at most 64 experts per token");
    require(n_experts <= 12288, "moe_route: at most 12288 experts");
    const gk::Rows lv = f32_rows(logits, "moe_route logits"), wv = f32_rows(weights, "moe_route weights");
    auto* idv = reinterpret_cast<int32_t*>(device_data(ids, "moe_route ids"));
    const int64_t ids_stride = static_cast<int64_t>(ids.row_stride / 4);
    if (logits.rows == 0) return;
    // The ids as rows of floats' width, for the overlap test of record_writes.
    const gk::Rows id_rows{reinterpret_cast<float*>(idv), ids.rows, ids.cols, ids_stride};
    record_writes(launch_key("moe_route", lv, k, idv, ids_stride, wv),
                  [=](const gk::Launch& l, const std::byte*) { gk::moe_route(l, lv, k, idv, ids_stride, wv); },
                  {id_rows, wv});
}

void GpuBackend::do_add_expert_bias(const Tensor& bias, const Tensor& ids, const Tensor& out) {
    const int64_t k = ids.cols;
    const gk::Rows bv = f32_rows(bias, "add_expert_bias bias"), ov = f32_rows(out, "add_expert_bias output");
    const auto* idv = reinterpret_cast<const int32_t*>(device_data(ids, "add_expert_bias ids"));
    const int64_t ids_stride = static_cast<int64_t>(ids.row_stride / 4);
    if (out.rows == 0) return;
    record(launch_key("add_expert_bias", bv, idv, ids_stride, k, ov), [=](const gk::Launch& l, const std::byte*) {
        gk::add_expert_bias(l, bv, idv, ids_stride, static_cast<int>(k), ov);
    });
}

void GpuBackend::do_moe_combine(const Tensor& y, const Tensor& weights, const Tensor& out) {
    const gk::Rows yv = f32_rows(y, "moe_combine input"), wv = f32_rows(weights, "moe_combine weights"),
                   ov = f32_rows(out, "moe_combine output");
    if (out.rows == 0) return;
    record(launch_key("moe_combine", yv, wv, ov),
           [=](const gk::Launch& l, const std::byte*) { gk::moe_combine(l, yv, wv, ov); });
}

void GpuBackend::do_moe_combine_shared(const Tensor& y, const Tensor& weights, const Tensor& shared,
                                       const Tensor& gate, const Tensor& out) {
    const gk::Rows yv = f32_rows(y, "moe_combine input"), wv = f32_rows(weights, "moe_combine weights"),
                   sv = f32_rows(shared, "moe_combine shared expert"), gv = f32_rows(gate, "moe_combine gate"),
                   ov = f32_rows(out, "moe_combine output");
    if (out.rows == 0) return;
    record(launch_key("moe_combine_shared", yv, wv, sv, gv, ov),
           [=](const gk::Launch& l, const std::byte*) { gk::moe_combine_shared(l, yv, wv, sv, gv, ov); });
}

void GpuBackend::do_convert(const Tensor& x, const Tensor& out) {
    const auto storable = [](gguf::TensorType t) {
        return t == gguf::TensorType::F32 || t == gguf::TensorType::F16 || t == gguf::TensorType::BF16 ||
               t == gguf::TensorType::Q8_0;
    };
    require(storable(x.type) && storable(out.type), "convert: types must be f32, f16, bf16 or q8_0");
    require((x.type != gguf::TensorType::Q8_0 && out.type != gguf::TensorType::Q8_0) || x.cols % 32 == 0,
            "convert: q8_0 rows need a multiple of 32 elements");
    const gk::TypedRows xv = typed_rows(x, "convert input"), ov = typed_rows(out, "convert output");
    record(launch_key("convert", xv, ov), [=](const gk::Launch& l, const std::byte*) { gk::convert_rows(l, xv, ov); });
}

}  // namespace ember::gpu_backend
