// SPDX-License-Identifier: MIT
// Elementwise operations on F32 rows, one invocation per element:
//   0 add: out = a + b      1 mul: out = a * b      2 scale: out = a * s
//   3 swiglu: out = silu(a) * b      4 geglu: out = gelu_tanh(a) * b
//   5 silu(a)   6 sigmoid(a)   7 softplus(a)   8 exp(a)   9 gelu_tanh(a)   10 gelu_erf(a)
//   11 swiglu_clamped: out = swiglu_clamped(a, b)
//   12 deltanet gates: out = softplus(a + b) * c (the decay; b and c one row) and gate = sigmoid(gate) (the beta
//      rows, at gate_off), each rounded as the separate add, softplus, mul and sigmoid
// b_stride 0 broadcasts b's one row over a's rows; b_step 0 broadcasts b's one column over a's columns.
// out may alias a.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(binding = 0) readonly buffer A { float a[]; };
layout(binding = 1) readonly buffer B { float b[]; };
layout(binding = 2) buffer Out { float out_f[]; };
layout(binding = 3) buffer Gate { float gate_f[]; };     // op 12
layout(binding = 4) readonly buffer C { float c_f[]; };  // op 12
layout(push_constant) uniform Params {
    uint a_off;
    uint a_stride;
    uint b_off;
    uint b_stride;
    uint out_off;
    uint out_stride;
    uint cols;
    uint rows;
    uint op;
    float s;
    uint b_step;
    uint gate_off, gate_stride, c_off;  // op 12
} p;

void main() {
    const uint idx = linear_group() * 256u + gl_LocalInvocationID.x;
    if (idx >= p.cols * p.rows) return;
    const uint r = idx / p.cols, c = idx % p.cols;
    const float va = a[p.a_off + r * p.a_stride + c];
    float y;
    if (p.op == 12u) {
        const uint g = p.gate_off + r * p.gate_stride + c;
        gate_f[g] = sigmoid(gate_f[g]);
        y = softplus(va + b[p.b_off + c]) * c_f[p.c_off + c];
    } else if (p.op == 2u) {
        y = va * p.s;
    } else if (p.op == 5u) {
        y = silu(va);
    } else if (p.op == 6u) {
        y = sigmoid(va);
    } else if (p.op == 7u) {
        y = softplus(va);
    } else if (p.op == 8u) {
        y = exp(va);
    } else if (p.op == 9u) {
        y = gelu_tanh(va);
    } else if (p.op == 10u) {
        y = 0.5 * va * (1.0 + erf_approx(va * 0.7071067811865476));
    } else {
        const float vb = b[p.b_off + r * p.b_stride + c * p.b_step];
        if (p.op == 0u) {
            y = va + vb;
        } else if (p.op == 1u) {
            y = va * vb;
        } else if (p.op == 3u) {
            y = silu(va) * vb;
        } else if (p.op == 11u) {
            y = swiglu_clamped(va, vb);
        } else {
            y = gelu_tanh(va) * vb;
        }
    }
    out_f[p.out_off + r * p.out_stride + c] = y;
}
