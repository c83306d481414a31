// SPDX-License-Identifier: MIT
// Mixture-of-experts routing and combination.
//   mode 0 route, one work group per token (at most MAX_EXPERTS experts): the k largest logits (ties to the lower index; the same experts as
//     the k most probable), weights = their softmax probabilities renormalized to sum 1 (the sum clamped at
//     6.1035e-5). ids and weights rows of k.
//   mode 1 combine, one invocation per output element: out[t, i] = sum_j weights[t, j] * y[t * k + j, i].
//   mode 2 combine with the shared expert: mode 1's sum + shared[t, i] * sigmoid(gate[t]), rounded as the separate
//     combine, sigmoid, mul and add dispatches (shared and gate are only read).
#version 450
#include "common.glsl"
#define MAX_EXPERTS 1024u
layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer In { float src[]; };  // logits (route) or y (combine)
layout(binding = 1) buffer Ids { int ids[]; };
layout(binding = 2) buffer Weights { float weights[]; };
layout(binding = 3) writeonly buffer Out { float out_f[]; };
layout(binding = 4) readonly buffer Shared { float shared_f[]; };  // mode 2
layout(binding = 5) readonly buffer Gate { float gate_f[]; };      // mode 2: one per token
layout(push_constant) uniform Params {
    uint mode;
    uint src_off, src_stride;
    uint ids_off, ids_stride;
    uint w_off, w_stride;
    uint out_off, out_stride;
    uint rows;   // tokens
    uint cols;   // experts (route) or width (combine)
    uint k;
    uint shared_off, shared_stride, gate_off, gate_stride;  // mode 2
} p;

// One work group per token: the logits go to shared memory, and each of the k picks is a work-group argmax
// (largest value, the lower index on ties) over the experts not picked yet.
shared float logit[MAX_EXPERTS];
shared bool picked[MAX_EXPERTS];
shared uint chosen_id[64];

void route(uint t) {
    const uint tid = gl_LocalInvocationID.x;
    const uint row = p.src_off + t * p.src_stride;
    float local_max = -1.0 / 0.0;
    for (uint e = tid; e < p.cols; e += 64u) {
        logit[e] = src[row + e];
        picked[e] = false;
        local_max = max(local_max, logit[e]);
    }
    const float m = workgroup_max(local_max);
    float local_total = 0.0;
    for (uint e = tid; e < p.cols; e += 64u) local_total += exp(logit[e] - m);
    const float total = workgroup_sum(local_total);
    float chosen = 0.0;
    for (uint j = 0u; j < p.k; ++j) {
        float best_v = -1.0 / 0.0;
        uint best = 0xffffffffu;
        for (uint e = tid; e < p.cols; e += 64u) {
            if (!picked[e] && (best == 0xffffffffu || logit[e] > best_v)) {
                best_v = logit[e];
                best = e;
            }
        }
        const float top = workgroup_max(best == 0xffffffffu ? -1.0 / 0.0 : best_v);
        // Indices are below 2^24, exact as floats; the lowest index holding the top value wins.
        const float lowest = -workgroup_max(best != 0xffffffffu && best_v == top ? -float(best) : -16777216.0);
        const uint id = uint(lowest);
        if (tid == 0u) {
            ids[p.ids_off + t * p.ids_stride + j] = int(id);
            chosen_id[j] = id;
            picked[id] = true;
        }
        chosen += exp(top - m) / total;
        barrier();
    }
    chosen = max(chosen, 6.1035e-5);
    if (tid < p.k) {
        weights[p.w_off + t * p.w_stride + tid] = (exp(logit[chosen_id[tid]] - m) / total) / chosen;
    }
}

void main() {
    if (p.mode == 0u) {
        const uint t = linear_group();
        if (t < p.rows) route(t);
        return;
    }
    const uint idx = linear_group() * 64u + gl_LocalInvocationID.x;
    if (idx >= p.rows * p.cols) return;
    const uint t = idx / p.cols, i = idx % p.cols;
    float o = 0.0;
    for (uint j = 0u; j < p.k; ++j)
        o += weights[p.w_off + t * p.w_stride + j] * src[p.src_off + (t * p.k + j) * p.src_stride + i];
    if (p.mode == 2u) {
        // precise: the product is rounded before the add, as the separate mul and add dispatches round it (a driver
        // that contracts the two into an FMA, NVIDIA's, gave other bits than the composition)
        precise const float term = shared_f[p.shared_off + t * p.shared_stride + i] *
                                   sigmoid(gate_f[p.gate_off + t * p.gate_stride]);
        precise const float total = o + term;
        o = total;
    }
    out_f[p.out_off + t * p.out_stride + i] = o;
}
