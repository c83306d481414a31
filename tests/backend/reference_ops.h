// SPDX-License-Identifier: MIT
// Plain reference implementations of the backend operations, in double precision on host vectors. Written from
// the definitions in backend/backend.h; every backend's results are compared with these.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/backend.h"

namespace ember::reference {

using Matrix = std::vector<double>;  // row-major

// Rows of a quantized/float tensor in its raw bytes, as doubles.
Matrix dequantize(gguf::TensorType type, std::span<const std::byte> bytes, int64_t rows, int64_t cols);

Matrix matmul(const Matrix& w, int64_t w_rows, int64_t cols, const Matrix& x, int64_t x_rows);
Matrix rms_norm(const Matrix& x, int64_t cols, std::span<const double> weight, double eps);
// (x - mean) / sqrt(biased variance + eps) * weight + bias, row by row.
Matrix layer_norm(const Matrix& x, int64_t cols, std::span<const double> weight, std::span<const double> bias,
                  double eps);
Matrix gated_activation(Activation act, const Matrix& gate, const Matrix& up);
// Every RopeMode; positions hold 1, 3 (multi_interleaved) or 2 (vision) values per row, axis-major.
void rope(Matrix& x, int64_t cols, int head_dim, std::span<const int32_t> positions, const RopeParams& p,
          std::span<const double> factors);
// k_cache/v_cache: rows = cache positions. Query t sees rows j <= positions[t], j < n_kv (inside p.window, if any).
// sinks: one attention sink per query head, or empty for none (p.sinks, a backend tensor, is not read).
Matrix attention(const Matrix& q, const Matrix& k_cache, const Matrix& v_cache, int64_t n_kv,
                 std::span<const int32_t> positions, const AttentionParams& p, std::span<const double> sinks = {});
void softmax(Matrix& x, int64_t cols);

double unary(UnaryOp op, double x);
Matrix l2_norm(const Matrix& x, int head_dim, double eps);
Matrix rms_norm_gated(const Matrix& x, int64_t cols, std::span<const double> weight, const Matrix& z, double eps);
// x [T, C], weight [C, K], state [K-1, C] (updated)
Matrix conv1d_causal(const Matrix& x, int64_t channels, const Matrix& weight, int64_t kernel, Matrix& state);
// The recurrent gated delta rule; q, k [T, Hk*dk], v [T, Hv*dv], g/beta [T, Hv], state [Hv*dk*dv] (updated).
// snapshots (if not null) receives the state after each of the last `n_snapshots` tokens.
Matrix delta_rule(const Matrix& q, const Matrix& k, const Matrix& v, const Matrix& g, const Matrix& beta,
                  Matrix& state, int64_t tokens, int hk, int hv, int dk, int dv, double q_scale,
                  int64_t n_snapshots = 0, Matrix* snapshots = nullptr);
void moe_route(const Matrix& logits, int64_t experts, int k, std::vector<int32_t>& ids, Matrix& weights);
// Expert products: row r of slot s is expert ids[s]'s weight row r (w holds experts x rows rows of `cols`) times x
// row s (one x row per slot) or s / k (one per token).
Matrix matmul_experts(const Matrix& w, int64_t rows, int64_t cols, std::span<const int32_t> ids,
                      const std::vector<float>& x, bool per_slot, int k);

}  // namespace ember::reference
