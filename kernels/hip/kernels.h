// SPDX-License-Identifier: MIT
// Host entry points of the HIP/CUDA kernels: each function validates nothing and only enqueues work on the given
// stream (the caller, engine/backend/gpu, checks shapes and turns misuse into ember::Error). All pointers are
// device pointers. Arguments that change from one decode step to the next (positions, token ids, the number of
// cached rows) are read by the kernels from device memory, so that a step's launches can be captured once into a
// graph and replayed. Plain C++: host files include this without a device compiler.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu_runtime.h"

namespace ember::gpu_kernels {

// GGUF tensor type ids of the types the kernels decode (gguf::TensorType values).
enum : uint32_t {
    kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8,
    kQ2_K = 10, kQ3_K = 11, kQ4_K = 12, kQ5_K = 13, kQ6_K = 14, kBF16 = 30, kMXFP4 = 39,
    kRocmfp4 = 100, kRocmfp4Fast = 101, kRocmfp6 = 102, kRocmfp8 = 103, kRocmfp3 = 104,
};

bool weight_type_supported(uint32_t type);
// Types whose mat x vec runs on 8-bit activations with integer dot products (ROCmFP4 dual/FAST, MXFP4, Q4_0, Q8_0).
bool has_integer_matvec(uint32_t type);

struct Launch {
    gpu::Stream stream = nullptr;
    int multiprocessors = 1;
    bool matrix_cores = false;  // CUDA sm_80 and later: products of many tokens run on the tensor cores
    bool dependent_launches = false;  // CUDA sm_90 and later: kernel_launch.cuh's programmatic dependent launches
};

// out = act(gate, up) (ember::Activation): silu(gate) * up, gelu_tanh(gate) * up, or gpt-oss's clamped SwiGLU.
enum class Gated : int { silu, gelu, swiglu_clamped };

// A weight matrix in GGUF's row layout.
struct Weights {
    uint32_t type = kF32;
    const uint8_t* data = nullptr;
    int64_t rows = 0, cols = 0;
    size_t row_stride = 0;  // bytes
};

// F32 rows; stride in elements.
struct Rows {
    float* data = nullptr;
    int64_t rows = 0, cols = 0, stride = 0;
};

// Rows of any storable type (caches, convert).
struct TypedRows {
    uint32_t type = kF32;
    uint8_t* data = nullptr;
    int64_t rows = 0, cols = 0;
    size_t row_stride = 0;  // bytes
};

// --- matrix products -------------------------------------------------------------------------------------------
// Activations as blocks of 32 int8 with their scale (Q8_1 style: d and d * sum of the codes).
size_t q8_1_bytes(int64_t rows, int64_t cols);
void quantize_q8_1(const Launch& l, const Rows& x, void* out);
// The residual norm after a product (moe_down_combine, matvec_integer): the last block of the product's (last)
// launch makes x[t] += y[t] (y: the product's output, every token's); out[t] = rms_norm(x[t]) * weight, and with q8_1
// also its Q8_1 blocks, as add_rms_norm does. counter: a device word that is 0 between launches (that block resets it).
struct NormTail {
    unsigned* counter = nullptr;
    Rows x, y;
    const float* weight = nullptr;
    float eps = 0.0f;
    Rows out;
    void* q8_1 = nullptr;
};
// Mat x vec: out[t, r] = w[r, :] . x[t, :] (+ bias[r]), for any number of tokens in runs that read the weights once
// each (16 tokens on the integer path, 8 on the float path). It beats the tiled products up to
// max_matvec_tokens(type) tokens: 32 for the integer types (activations quantized once, quantize_q8_1), 16 for the
// others.
inline constexpr int64_t kMaxIntegerMatvecTokens = 32, kMaxFloatMatvecTokens = 16;
inline int64_t max_matvec_tokens(uint32_t type, int64_t cols) {
    return has_integer_matvec(type) && cols % 32 == 0 ? kMaxIntegerMatvecTokens : kMaxFloatMatvecTokens;
}
void matvec_integer(const Launch& l, const Weights& w, const void* xq, int64_t tokens, const Rows& out,
                    const float* bias, const NormTail* norm = nullptr);
void matvec_float(const Launch& l, const Weights& w, const Rows& x, const Rows& out, const float* bias);
// Products of one input in one launch: out_i = w_i . x (+ bias_i) for up to kMaxManyProducts matrices of integer
// types (each its own) and x's row length, every row summed as matvec_integer sums it; tokens as matvec_integer.
inline constexpr int kMaxManyProducts = 4;
struct ProductRows {
    Weights w;
    Rows out;
    const float* bias = nullptr;
};
void matvec_integer_many(const Launch& l, const ProductRows* products, int count, const void* xq, int64_t tokens);
// A router's route (moe_router): after matvec_float_many's products, the last block of its last launch routes every
// token's logits as moe_route does. counter: a device word that is 0 between launches (that block resets it).
struct RouteTail {
    unsigned* counter = nullptr;
    Rows logits;
    int k = 0;
    int32_t* ids = nullptr;
    int64_t ids_stride = 0;
    Rows weights;
};
// Whether matvec_float_many routes n_experts logits in its last block.
bool route_tail_fits(int64_t n_experts);
// The same for F32 matrices (a router and a gate), each row summed as matvec_float sums it; up to
// kMaxFloatMatvecTokens tokens; with route, also that tail.
void matvec_float_many(const Launch& l, const ProductRows* products, int count, const Rows& x,
                       const RouteTail* route = nullptr);
// out[t, r] = act(w_gate[r, :] . x[t, :], w_up[r, :] . x[t, :]) for an integer type (both matrices of one type and
// shape), up to max_matvec_tokens tokens: the sums of matvec_integer, rounded exactly as its two launches and a
// gated_activation.
void matvec_gated_integer(const Launch& l, Gated act, const Weights& w_gate, const Weights& w_up, const void* xq,
                          int64_t tokens, const Rows& out);
// Any number of tokens: weights decoded into shared-memory tiles. Products too small to give every multiprocessor a
// tile split along the inputs into `scratch` (matmul_tiled_scratch_bytes of device memory, 0 where none is needed;
// nullptr keeps one pass).
size_t matmul_tiled_scratch_bytes(const Launch& l, const Weights& w, int64_t tokens);
void matmul_tiled(const Launch& l, const Weights& w, const Rows& x, const Rows& out, const float* bias,
                  void* scratch = nullptr);

// Mixture of experts. w holds n_experts matrices of w.rows / n_experts rows; ids [tokens, k] (I32, device).
// out[t * k + j] = W_{ids[t, j]} . x[r] with r = t (x_per_slot false) or t * k + j. Ids outside [0, n_experts)
// give a zero row.
void matvec_experts_integer(const Launch& l, const Weights& w, int64_t n_experts, const void* xq, bool x_per_slot,
                            const int32_t* ids, int64_t tokens, int k, const Rows& out);
// The gated form of matvec_experts_integer: out[s] = act(W_gate . x, W_up . x) of slot s's expert.
// A shared expert's gate and up matrices (the routed experts' type, cols and row stride) and its output rows [tokens,
// gate.rows]: matvec_experts_gated_integer then also makes out = act(gate . x[t], up . x[t]) as matvec_gated_integer
// does, in the same launch (x one row per token).
struct SharedGated {
    Weights gate, up;
    Rows out;
};
void matvec_experts_gated_integer(const Launch& l, Gated act, const Weights& w_gate, const Weights& w_up,
                                  int64_t n_experts, const void* xq, bool x_per_slot, const int32_t* ids,
                                  int64_t tokens, int k, const Rows& out, const SharedGated* shared = nullptr);
void matvec_experts_float(const Launch& l, const Weights& w, int64_t n_experts, const Rows& x, bool x_per_slot,
                          const int32_t* ids, int64_t tokens, int k, const Rows& out);
// The end of a mixture-of-experts block (Backend::moe_down_combine) for an integer type, per token t of out.rows:
// out[t, r] = sum_j weights[t, j] * (D_{ids[t, j]}[r] . act[s]) + sigmoid(gate[t, 0]) * (S[r] . shared_act[t]) with
// s = t * k + j (act_per_slot) or t, each product summed as matvec_experts_integer / matvec_integer sum and the terms
// added as moe_combine_shared adds them. The activations are F32; a first launch quantizes them once into `blocks`
// (moe_down_blocks_bytes of device scratch) as quantize_q8_1 would. shared_down (nullptr: no shared expert) has down's
// type and cols; k plus the shared expert are at most kMaxMoeDownInputs.
inline constexpr int kMaxMoeDownInputs = 10;
size_t moe_down_blocks_bytes(int64_t tokens, int k, int64_t cols, bool shared);
void moe_down_combine(const Launch& l, const Weights& down, int64_t n_experts, const Rows& act, bool act_per_slot,
                      const int32_t* ids, int k, const Rows& weights, const Weights* shared_down,
                      const Rows& shared_act, const Rows& gate, const Rows& out, void* blocks,
                      const NormTail* norm = nullptr);
// A verify batch of an integer type: the slots grouped by expert (scratch: expert_group_bytes), each expert's rows
// read once per tile of kMatvecExpertTileSlots of its slots; the same sums as matvec_experts_integer.
void matvec_experts_grouped(const Launch& l, const Weights& w, int64_t n_experts, const void* xq, bool x_per_slot,
                            const int32_t* ids, int64_t tokens, int k, const Rows& out, void* scratch);
// Its gated form: out[s] = act(W_gate . x, W_up . x), the same values as matvec_experts_gated_integer.
void matvec_experts_gated_grouped(const Launch& l, Gated act, const Weights& w_gate, const Weights& w_up,
                                  int64_t n_experts, const void* xq, bool x_per_slot, const int32_t* ids,
                                  int64_t tokens, int k, const Rows& out, void* scratch);
// The batched form: slots grouped by expert (scratch: expert_group_bytes), then one tiled product per tile of an
// expert's slots (a block per tile, so a popular expert spreads over many blocks).
size_t expert_group_bytes(int64_t n_experts, int64_t slots);
void matmul_experts_grouped(const Launch& l, const Weights& w, int64_t n_experts, const Rows& x, bool x_per_slot,
                            const int32_t* ids, int64_t tokens, int k, const Rows& out, void* scratch);
// Gate and up of one shape with their activation, out = act(gate . x, up . x): one tensor-core pass for both where
// the device has one (block-quantized weights), else the two tiled products into out and up_scratch and
// gated_activation. Dense, and grouped by expert as matmul_experts_grouped.
void matmul_gated_tiled(const Launch& l, Gated act, const Weights& gate, const Weights& up, const Rows& x,
                        const Rows& up_scratch, const Rows& out);
void matmul_experts_gated_grouped(const Launch& l, Gated act, const Weights& gate, const Weights& up,
                                  int64_t n_experts, const Rows& x, bool x_per_slot, const int32_t* ids,
                                  int64_t tokens, int k, const Rows& up_scratch, const Rows& out, void* scratch);

// Products of many tokens on 8-bit tensor-core operands (CUDA sm_80 and later) for the integer mat x vec's weight
// types (ROCmFP4 dual and FAST, MXFP4, Q4_0, Q8_0): activations quantized as quantize_q8_1 writes them (xq: rows of
// w.cols / 32 blocks), codes multiplied exactly in int32, scales applied per block in f32. Dense (tokens rows of xq),
// gated (act(gate . x, up . x)), and grouped by expert as matmul_experts_grouped (scratch: expert_group_bytes).
// The dense form splits a product with too few tiles along its inputs into `split` (int8_tiles_split_bytes of device
// scratch, 0 where none is needed; nullptr keeps one pass).
bool int8_tiles_available(const Launch& l, const Weights& w);
size_t int8_tiles_split_bytes(const Launch& l, const Weights& w, int64_t tokens);
void matmul_int8_tiles(const Launch& l, const Weights& w, const void* xq, int64_t tokens, const Rows& out,
                       const float* bias, void* split);
void matmul_gated_int8_tiles(const Launch& l, Gated act, const Weights& gate, const Weights& up, const void* xq,
                             int64_t tokens, const Rows& out);
void matmul_experts_int8_tiles(const Launch& l, const Weights& w, int64_t n_experts, const void* xq, bool x_per_slot,
                               const int32_t* ids, int64_t tokens, int k, const Rows& out, void* scratch);
void matmul_experts_gated_int8_tiles(const Launch& l, Gated act, const Weights& gate, const Weights& up,
                                     int64_t n_experts, const void* xq, bool x_per_slot, const int32_t* ids,
                                     int64_t tokens, int k, const Rows& out, void* scratch);

// --- rows and elementwise ----------------------------------------------------------------------------------------
// out[i] = table[ids[i]] as F32 (ids checked by the caller).
void get_rows(const Launch& l, const Weights& table, const int32_t* ids, const Rows& out);
void convert_rows(const Launch& l, const TypedRows& src, const TypedRows& dst);
// b has a.rows rows, one row (broadcast), or (mul only) one column (row r scaled by b[r, 0]).
void add(const Launch& l, const Rows& a, const Rows& b, const Rows& out);
void mul(const Launch& l, const Rows& a, const Rows& b, const Rows& out);
void scale(const Launch& l, const Rows& x, float s, const Rows& out);
enum class Unary : int { silu, sigmoid, softplus, exp, gelu, gelu_erf };  // gelu: the tanh form
void unary(const Launch& l, Unary op, const Rows& x, const Rows& out);
// out = act(gate, up) (Gated, above).
void gated_activation(const Launch& l, Gated act, const Rows& gate, const Rows& up, const Rows& out);
// The RMS norms also write out's Q8_1 blocks into q8_1 (as quantize_q8_1 would, for rows out.rows x out.cols,
// out.cols a multiple of 32) unless it is nullptr, so that the products after them need no quantizing launch.
void rms_norm(const Launch& l, const Rows& x, const float* weight, float eps, const Rows& out, void* q8_1 = nullptr);
// x += y, then out = rms_norm(x) * weight (the rounding of add and rms_norm).
void add_rms_norm(const Launch& l, const Rows& x, const Rows& y, const float* weight, float eps, const Rows& out,
                  void* q8_1 = nullptr);
void rms_norm_gated(const Launch& l, const Rows& x, const float* weight, const Rows& z, float eps, const Rows& out,
                    void* q8_1 = nullptr);
// weight and bias: x.cols elements.
void layer_norm(const Launch& l, const Rows& x, const float* weight, const float* bias, float eps, const Rows& out);
void l2_norm(const Launch& l, const Rows& x, int head_dim, float eps, const Rows& out);
void softmax(const Launch& l, const Rows& x);

// --- positions and attention -------------------------------------------------------------------------------------
struct RopeArgs {
    int head_dim = 0, n_rot = 0;
    // 0 normal, 1 neox, 2 multi_interleaved (positions hold 3 values per row, axis-major), 3 vision (2 per row:
    // row then column, as engine/backend/rope_angle.h)
    int mode = 0;
    float freq_base = 10000.0f, freq_scale = 1.0f;
    int sections[4] = {0, 0, 0, 0};
};
void rope(const Launch& l, const Rows& x, const int32_t* positions, const RopeArgs& a, const float* freq_factors);
// Row i of src (F32) into row positions[i] of cache (F32, F16 or Q8_0).
void store_rows(const Launch& l, const Rows& src, const TypedRows& cache, const int32_t* positions);
struct AttentionArgs {
    int n_head = 0, n_head_kv = 0, head_dim = 0;
    float scale = 0.0f;
    int window = 0;  // > 0: the query at position p sees rows p - window < j <= p only
    const float* sinks = nullptr;  // [n_head] attention sinks (AttentionParams::sinks), or nullptr
};
// Scratch floats needed for `tokens` queries.
size_t attention_scratch_floats(const Launch& l, int64_t tokens, const AttentionArgs& a);
// n_kv: device pointer to the number of cache rows in use.
void attention(const Launch& l, const Rows& q, const TypedRows& k_cache, const TypedRows& v_cache,
               const int32_t* n_kv, const int32_t* positions, const AttentionArgs& a, const Rows& out, float* scratch);

// --- recurrent layers and routing ----------------------------------------------------------------------------------
// weight [C rows, K cols] F32; state [K - 1, C]; with silu, out = silu(the convolution).
void conv1d_causal(const Launch& l, const Rows& x, const Rows& weight, const Rows& state, const Rows& out, bool silu);
// In place: beta = sigmoid(beta); alpha = softplus(alpha + dt_bias) * a (dt_bias and a: alpha.cols values).
void deltanet_gates(const Launch& l, const Rows& beta, const Rows& alpha, const float* dt_bias, const float* a);
struct DeltaRuleArgs {
    Rows q, k, v, g, beta, state, out;
    float* snapshots = nullptr;  // [n_snapshots, n_v_heads * d_k * d_v] or nullptr
    int64_t n_snapshots = 0;
    int n_k_heads = 0, n_v_heads = 0, d_k = 0, d_v = 0;
    float q_scale = 1.0f;
};
void delta_rule(const Launch& l, const DeltaRuleArgs& a);
// The token-by-token Gated DeltaNet core in one launch (Backend::deltanet_recurrent): a block per key head and its
// n_v_heads / n_k_heads value heads. Per token: the causal convolution of the block's q, k and v channels with silu
// (read from mix at the channel offsets of q, k and v; the block owns those channels' state), the L2 norms of q and k,
// the gates, the delta rule step and each head's gated RMS norm into rule.out (and its activation blocks into q8_1
// unless nullptr). rule.q, rule.k and rule.v are not read: only their channel offsets matter. beta and g (rule.beta,
// rule.g) are the raw products. The arithmetic of each step is its kernel's; the norms' sums run in their own order.
struct DeltaNetStepArgs {
    DeltaRuleArgs rule;
    Rows mix, conv_weight, conv_state, z;
    int64_t q_channel = 0, k_channel = 0, v_channel = 0;  // first channel of q, k and v in mix
    const float* dt_bias = nullptr;
    const float* a = nullptr;
    const float* norm = nullptr;
    float l2_eps = 0.0f, norm_eps = 0.0f;
    void* q8_1 = nullptr;
};
// Whether deltanet_recurrent takes these sizes (else the caller composes the steps).
bool deltanet_recurrent_fits(int n_k_heads, int n_v_heads, int d_k, int d_v, int conv_kernel);
void deltanet_recurrent(const Launch& l, const DeltaNetStepArgs& a);
// ids (I32) and weights (F32): [T, k] rows with strides in elements.
void moe_route(const Launch& l, const Rows& logits, int k, int32_t* ids, int64_t ids_stride, const Rows& weights);
// out[t * k + j] += bias[ids[t, j]] (ids I32 [T, k], stride in elements; out [T * k, bias.cols]).
void add_expert_bias(const Launch& l, const Rows& bias, const int32_t* ids, int64_t ids_stride, int k,
                     const Rows& out);
void moe_combine(const Launch& l, const Rows& y, const Rows& weights, const Rows& out);
// moe_combine + sigmoid(gate[t, 0]) * shared[t, :], rounded as the separate launches.
void moe_combine_shared(const Launch& l, const Rows& y, const Rows& weights, const Rows& shared, const Rows& gate,
                        const Rows& out);

}  // namespace ember::gpu_kernels
