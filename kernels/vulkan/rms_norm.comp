// SPDX-License-Identifier: MIT
// Row normalizations, one work group per segment of `cols` elements (a row, or one head of a row):
//   mode 0 rms_norm:        out = x / sqrt(mean(x^2) + eps) * weight
//   mode 1 l2_norm:         out = x / max(|x|, eps)
//   mode 2 gated rms_norm:  out = x / sqrt(mean(x^2) + eps) * weight * silu(z)
//   mode 3 layer_norm:      out = (x - mean) / sqrt(mean((x - mean)^2) + eps) * weight + bias (bias at z_off, one
//                           row; never with QUANTIZE)
//   mode 4 add + rms_norm:  x += z (the residual, kept), then mode 0 of it: the rounding of an add and an rms_norm
//                           dispatch, in one (whole rows only)
// Segment s is head s % segs of row s / segs. out may alias x.
// With QUANTIZE (modes 0, 2 and 4, cols a multiple of 32) the output is also written as Q8_1 blocks (q8_1_store.glsl)
// for the integer dot product kernels that read it next; segment s's element i is in block s * cols / 32 + i / 32,
// which for contiguous rows is the layout quantize_q8_1.comp writes.
#version 450
#include "common.glsl"
layout(local_size_x = 128) in;
layout(binding = 0) readonly buffer X { float x[]; };
// Mode 4's view of x: the sums written by one invocation are read back by another (QUANTIZE's element order).
layout(binding = 0) coherent buffer Residual { float residual[]; };
layout(binding = 1) readonly buffer Weight { float w[]; };
layout(binding = 2) buffer Out { float out_f[]; };
layout(binding = 3) readonly buffer Z { float z[]; };
#ifdef QUANTIZE
layout(binding = 4) writeonly buffer Codes { uint codes[]; };
layout(binding = 4) writeonly buffer Scales { vec2 scales[]; };
#define Q8_STORE_INVOCATIONS 128
#include "q8_1_store.glsl"
#endif
layout(push_constant) uniform Params {
    uint x_off;
    uint x_stride;
    uint w_off;
    uint out_off;
    uint out_stride;
    uint cols;
    uint rows;  // segments in all
    float eps;
    uint segs;  // segments per row
    uint mode;
    uint z_off;
    uint z_stride;
    uint q_off;  // QUANTIZE: the Q8_1 codes (words) and scales (vec2 units)
    uint d_off;
} p;

float normalized(uint in_row, uint r, uint head, uint i, float inv) {
    float y = (p.mode == 4u ? residual[in_row + i] : x[in_row + i]) * inv * w[p.w_off + i];
    if (p.mode == 2u) {
        const float g = z[p.z_off + r * p.z_stride + head + i];
        y *= silu(g);
    }
    return y;
}

void main() {
    const uint s = linear_group();
    if (s >= p.rows) return;
    const uint r = s / p.segs, head = (s % p.segs) * p.cols;
    const uint in_row = p.x_off + r * p.x_stride + head;
    const uint out_row = p.out_off + r * p.out_stride + head;
    if (p.mode == 3u) {  // two passes: the mean, then the spread around it
        float total = 0.0;
        for (uint i = gl_LocalInvocationID.x; i < p.cols; i += 128u) total += x[in_row + i];
        const float mean = exact_div(workgroup_sum(total), float(p.cols));
        float spread = 0.0;
        for (uint i = gl_LocalInvocationID.x; i < p.cols; i += 128u) {
            const float d = x[in_row + i] - mean;
            spread += d * d;
        }
        const float inv = exact_div(1.0, sqrt(exact_div(workgroup_sum(spread), float(p.cols)) + p.eps));
        for (uint i = gl_LocalInvocationID.x; i < p.cols; i += 128u)
            out_f[out_row + i] = (x[in_row + i] - mean) * inv * w[p.w_off + i] + z[p.z_off + i];
        return;
    }
    float sum = 0.0;
    if (p.mode == 4u) {
        for (uint i = gl_LocalInvocationID.x; i < p.cols; i += 128u) {
            const float v = residual[in_row + i] + z[p.z_off + r * p.z_stride + i];
            residual[in_row + i] = v;
            sum += v * v;
        }
        memoryBarrierBuffer();  // before workgroup_sum's barrier: the sums are visible to the whole work group
    } else {
        for (uint i = gl_LocalInvocationID.x; i < p.cols; i += 128u) sum += x[in_row + i] * x[in_row + i];
    }
    sum = workgroup_sum(sum);
    if (p.mode == 1u) {
        const float inv = exact_div(1.0, max(sqrt(sum), p.eps));
        for (uint i = gl_LocalInvocationID.x; i < p.cols; i += 128u) out_f[out_row + i] = x[in_row + i] * inv;
        return;
    }
    const float inv = exact_div(1.0, sqrt(exact_div(sum, float(p.cols)) + p.eps));
#ifdef QUANTIZE
    // Four consecutive elements per invocation, so that eight neighbours hold one Q8_1 block.
    for (uint base = 0u; base < p.cols; base += 512u) {
        const uint i = base + gl_LocalInvocationID.x * 4u;
        const bool valid = i < p.cols;
        vec4 y = vec4(0.0);
        if (valid) {
            for (uint c = 0u; c < 4u; ++c) {
                y[c] = normalized(in_row, r, head, i + c, inv);
                out_f[out_row + i + c] = y[c];
            }
        }
        q8_1_store(y, valid, s * (p.cols / 32u) + i / 32u, p.q_off, p.d_off);
    }
#else
    for (uint i = gl_LocalInvocationID.x; i < p.cols; i += 128u) out_f[out_row + i] = normalized(in_row, r, head, i, inv);
#endif
}
