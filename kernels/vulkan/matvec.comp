// SPDX-License-Identifier: MIT
// out[t, r] = sum_k w[r, k] * x[t, k] (+ bias[r]) for up to 8 tokens: the weights are read once for all of them.
// One work group per weight row; invocations stride over the row's elements, so neighbours read neighbouring
// bytes whatever the block size. Types with a faster kernel (matvec_blocks.comp) use that one instead.
#version 450
#include "common.glsl"
layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer Weights { uint W[]; };
layout(binding = 1) readonly buffer X { float x[]; };
layout(binding = 2) writeonly buffer Out { float out_f[]; };
layout(binding = 3) readonly buffer Bias { float bias[]; };
layout(binding = 4) readonly buffer Ids { int ids[]; };

layout(push_constant) uniform Params {
    uint w_off;       // bytes
    uint w_stride;    // bytes
    uint x_off;       // words
    uint x_stride;    // words
    uint out_off;     // words
    uint out_stride;  // words
    uint cols;
    uint rows;
    uint tokens;      // 1..8
    uint bias_off;    // words
    uint has_bias;
    uint ids_off;     // EXPERTS: ids[t, j] at ids_off + t * ids_stride + j (words)
    uint ids_stride;
    uint k;           // EXPERTS: slots per token
    uint expert_rows; // EXPERTS: rows of one expert's matrix
    uint per_slot;    // EXPERTS: x has a row per slot (else per token)
} p;
#include "dequant.glsl"

// The output row this work group computes and where its weights, activations and outputs start. With EXPERTS
// (matmul_experts), the grid's y is the slot t * k + j and the weights are those of expert ids[t, j].
struct Job {
    uint r;
    bool valid;
    uint w_row;   // bytes
    uint x_base;  // words
    uint out_base;
    uint tokens;
};

Job make_job(uint r) {
    Job job;
    job.r = r;
#if defined(EXPERTS)
    const uint slot = gl_WorkGroupID.y;
    const int e = ids[p.ids_off + (slot / p.k) * p.ids_stride + slot % p.k];
    job.valid = r < p.expert_rows && e >= 0 && uint(e) * p.expert_rows < p.rows;
    job.w_row = p.w_off + (uint(max(e, 0)) * p.expert_rows + r) * p.w_stride;
    job.x_base = p.x_off + (p.per_slot != 0u ? slot : slot / p.k) * p.x_stride;
    job.out_base = p.out_off + slot * p.out_stride;
    job.tokens = 1u;
#else
    job.valid = r < p.rows;
    job.w_row = p.w_off + r * p.w_stride;
    job.x_base = p.x_off;
    job.out_base = p.out_off;
    job.tokens = p.tokens;
#endif
    return job;
}

void main() {
#if defined(EXPERTS)
    const Job job = make_job(gl_WorkGroupID.x);
#else
    const Job job = make_job(linear_group());
#endif
    if (!job.valid) return;
    float acc[8] = float[8](0, 0, 0, 0, 0, 0, 0, 0);
    // Four weights per pass, loaded before any is used: a row is a chain of dependent loads otherwise, and a
    // small matrix (a router, one row of a gate) is then bound by memory latency, not bandwidth.
    for (uint k0 = gl_LocalInvocationID.x; k0 < p.cols; k0 += 256u) {
        float w[4];
        for (uint u = 0u; u < 4u; ++u) {
            const uint k = k0 + 64u * u;
            w[u] = k < p.cols ? dq_elem(job.w_row, k) : 0.0;
        }
        for (uint t = 0u; t < 8u; ++t) {
            if (t < job.tokens) {
                for (uint u = 0u; u < 4u; ++u) {
                    const uint k = k0 + 64u * u;
                    if (k < p.cols) acc[t] += w[u] * x[job.x_base + t * p.x_stride + k];
                }
            }
        }
    }
    for (uint t = 0u; t < 8u; ++t) {
        if (t >= job.tokens) break;
        float s = workgroup_sum(acc[t]);
        if (gl_LocalInvocationID.x == 0u) {
            if (p.has_bias != 0u) s += bias[p.bias_off + job.r];
            out_f[job.out_base + t * p.out_stride + job.r] = s;
        }
    }
}
