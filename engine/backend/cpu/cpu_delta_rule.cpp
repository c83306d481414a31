// SPDX-License-Identifier: MIT
// The gated delta rule (../specs/qwen35moe.md §5.4 steps 7-8), head by head on the pool. The recurrent form walks
// the tokens one by one; the chunked form processes up to 64 tokens at a time with the WY representation:
//   A = strict_lower((K_b K^T) . D),  U = (I + A)^-1 V_b,  W = (I + A)^-1 (K_b . e^gamma)
//   V' = U - W S,  O = (Q . e^gamma) S + lower((Q K^T) . D) V',  S' = e^gamma_C S + (K . e^(gamma_C - gamma))^T V'
// where gamma is the running sum of g in the chunk and D[t, s] = exp(gamma_t - gamma_s).
#include <cmath>
#include <cstring>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/host_buffer.h"

namespace ember::cpu_backend {

namespace {

constexpr int kMaxChunk = 64;

struct HeadView {
    const DeltaRuleArgs& a;
    int head;
    int k_head;
    const float* q(int64_t t) const { return host_row(a.q, t) + int64_t{k_head} * a.d_k; }
    const float* k(int64_t t) const { return host_row(a.k, t) + int64_t{k_head} * a.d_k; }
    const float* v(int64_t t) const { return host_row(a.v, t) + int64_t{head} * a.d_v; }
    float g(int64_t t) const { return host_row(a.g, t)[head]; }
    float beta(int64_t t) const { return host_row(a.beta, t)[head]; }
    float* out(int64_t t) const { return host_row(a.out, t) + int64_t{head} * a.d_v; }
};

// One token: S = e^g S; delta = beta (v - S^T k); S += k delta^T; o = S^T q.
void recurrent_step(const HeadView& h, int64_t t, float* S, float* delta) {
    const int dk = h.a.d_k, dv = h.a.d_v;
    const float decay = std::exp(h.g(t));
    const float* k = h.k(t);
    const float* q = h.q(t);
    const float* v = h.v(t);
    for (int j = 0; j < dv; ++j) delta[j] = 0.0f;
    for (int i = 0; i < dk; ++i) {
        float* row = S + int64_t{i} * dv;
        for (int j = 0; j < dv; ++j) {
            row[j] *= decay;
            delta[j] += row[j] * k[i];
        }
    }
    const float beta = h.beta(t);
    for (int j = 0; j < dv; ++j) delta[j] = beta * (v[j] - delta[j]);
    float* o = h.out(t);
    for (int j = 0; j < dv; ++j) o[j] = 0.0f;
    for (int i = 0; i < dk; ++i) {
        float* row = S + int64_t{i} * dv;
        const float qi = q[i] * h.a.q_scale;
        for (int j = 0; j < dv; ++j) {
            row[j] += k[i] * delta[j];
            o[j] += row[j] * qi;
        }
    }
}

// Tokens [first, first + c) of one head in the chunked form. Scratch sizes: see the caller.
void chunk_step(const HeadView& h, int64_t first, int c, float* S, std::vector<double>& work) {
    const int dk = h.a.d_k, dv = h.a.d_v;
    double* gamma = work.data();                    // [c]
    double* A = gamma + kMaxChunk;                  // [c, c]
    double* U = A + kMaxChunk * kMaxChunk;          // [c, dv]  -> V'
    double* W = U + int64_t{kMaxChunk} * dv;        // [c, dk]
    double* QK = W + int64_t{kMaxChunk} * dk;       // [c, c]
    double running = 0.0;
    for (int t = 0; t < c; ++t) gamma[t] = (running += h.g(first + t));
    for (int t = 0; t < c; ++t) {
        const float* kt = h.k(first + t);
        const float* qt = h.q(first + t);
        const double bt = h.beta(first + t);
        for (int s = 0; s <= t; ++s) {
            const float* ks = h.k(first + s);
            double kk = 0.0, qk = 0.0;
            for (int i = 0; i < dk; ++i) {
                kk += static_cast<double>(kt[i]) * ks[i];
                qk += static_cast<double>(qt[i]) * ks[i];
            }
            const double d = std::exp(gamma[t] - gamma[s]);
            A[t * kMaxChunk + s] = s < t ? bt * kk * d : 0.0;
            QK[t * kMaxChunk + s] = qk * h.a.q_scale * d;
        }
    }
    // Forward substitution for U and W (I + A is unit lower triangular).
    for (int t = 0; t < c; ++t) {
        const double bt = h.beta(first + t);
        const float* vt = h.v(first + t);
        const float* kt = h.k(first + t);
        const double eg = std::exp(gamma[t]);
        double* u = U + int64_t{t} * dv;
        double* w = W + int64_t{t} * dk;
        for (int j = 0; j < dv; ++j) u[j] = bt * vt[j];
        for (int i = 0; i < dk; ++i) w[i] = bt * kt[i] * eg;
        for (int s = 0; s < t; ++s) {
            const double a = A[t * kMaxChunk + s];
            if (a == 0.0) continue;
            const double* us = U + int64_t{s} * dv;
            const double* ws = W + int64_t{s} * dk;
            for (int j = 0; j < dv; ++j) u[j] -= a * us[j];
            for (int i = 0; i < dk; ++i) w[i] -= a * ws[i];
        }
    }
    // V' = U - W S, and O = (Q e^gamma) S + lower(QK . D) V'.
    for (int t = 0; t < c; ++t) {
        double* u = U + int64_t{t} * dv;
        const double* w = W + int64_t{t} * dk;
        const float* qt = h.q(first + t);
        const double eg = std::exp(gamma[t]) * h.a.q_scale;
        float* o = h.out(first + t);
        std::vector<double>& acc = work;  // reuse the tail of work for the output row
        double* orow = acc.data() + (acc.size() - static_cast<size_t>(dv));
        for (int j = 0; j < dv; ++j) orow[j] = 0.0;
        for (int i = 0; i < dk; ++i) {
            const float* srow = S + int64_t{i} * dv;
            const double wi = w[i];
            const double qi = qt[i] * eg;
            for (int j = 0; j < dv; ++j) {
                u[j] -= wi * srow[j];
                orow[j] += qi * srow[j];
            }
        }
        for (int s = 0; s <= t; ++s) {
            const double m = QK[t * kMaxChunk + s];
            const double* us = U + int64_t{s} * dv;
            for (int j = 0; j < dv; ++j) orow[j] += m * us[j];
        }
        for (int j = 0; j < dv; ++j) o[j] = static_cast<float>(orow[j]);
    }
    // S' = e^gamma_C S + sum_t (k_t e^(gamma_C - gamma_t)) V'_t^T
    const double last = gamma[c - 1];
    const float total_decay = static_cast<float>(std::exp(last));
    for (int i = 0; i < dk; ++i) {
        float* srow = S + int64_t{i} * dv;
        for (int j = 0; j < dv; ++j) srow[j] *= total_decay;
    }
    for (int t = 0; t < c; ++t) {
        const float* kt = h.k(first + t);
        const double f = std::exp(last - gamma[t]);
        const double* u = U + int64_t{t} * dv;
        for (int i = 0; i < dk; ++i) {
            const double ki = kt[i] * f;
            float* srow = S + int64_t{i} * dv;
            for (int j = 0; j < dv; ++j) srow[j] += static_cast<float>(ki * u[j]);
        }
    }
}

}  // namespace

void CpuBackend::do_delta_rule(const DeltaRuleArgs& a) {
    const int64_t n = a.q.rows;
    const int64_t head_state = int64_t{a.d_k} * a.d_v;
    const int64_t n_snap = a.snapshots ? a.snapshots->rows : 0;
    // Tokens [0, n - n_snap) may use the chunked form; the snapshotted tail always runs token by token.
    const int64_t bulk = n - n_snap;

    for_rows(a.n_v_heads, n * head_state * 4, [&](int64_t begin, int64_t end) {
        std::vector<float> delta(static_cast<size_t>(a.d_v));
        std::vector<double> work;
        if (a.chunk_size > 0)
            work.resize(kMaxChunk + 2 * kMaxChunk * kMaxChunk + size_t(kMaxChunk) * (a.d_v + a.d_k) + a.d_v);
        for (int64_t hd = begin; hd < end; ++hd) {
            const HeadView h{a, static_cast<int>(hd), static_cast<int>(hd % a.n_k_heads)};
            float* S = host_f32(a.state) + hd * head_state;
            if (a.chunk_size > 0) {
                for (int64_t first = 0; first < bulk; first += a.chunk_size)
                    chunk_step(h, first, static_cast<int>(std::min<int64_t>(a.chunk_size, bulk - first)), S, work);
            } else {
                for (int64_t t = 0; t < bulk; ++t) recurrent_step(h, t, S, delta.data());
            }
            for (int64_t t = bulk; t < n; ++t) {
                recurrent_step(h, t, S, delta.data());
                std::memcpy(host_row(*a.snapshots, t - bulk) + hd * head_state, S,
                            static_cast<size_t>(head_state) * 4);
            }
        }
    });
}

}  // namespace ember::cpu_backend
