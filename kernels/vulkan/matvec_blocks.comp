// SPDX-License-Identifier: MIT
// Decode matrix x vector for the 32-weight block types that dominate the models (Q4_0, Q8_0, ROCmFP4 dual and
// fast): each work group takes 4 weight rows, 32 invocations per row; an invocation decodes whole blocks with
// 32-bit loads and multiplies them with up to 8 activation rows. Same parameters as matvec.comp.
#version 450
#include "common.glsl"
layout(local_size_x = 128) in;
layout(binding = 0) readonly buffer Weights { uint W[]; };
layout(binding = 1) readonly buffer X { float x[]; };
layout(binding = 2) writeonly buffer Out { float out_f[]; };
layout(binding = 3) readonly buffer Bias { float bias[]; };
layout(binding = 4) readonly buffer Ids { int ids[]; };

layout(push_constant) uniform Params {
    uint w_off;
    uint w_stride;
    uint x_off;
    uint x_stride;
    uint out_off;
    uint out_stride;
    uint cols;
    uint rows;
    uint tokens;
    uint bias_off;
    uint has_bias;
    uint ids_off;
    uint ids_stride;
    uint k;
    uint expert_rows;
    uint per_slot;
} p;

#if defined(TYPE_Q4_0)
#define BLOCK_BYTES 18u
#elif defined(TYPE_Q8_0)
#define BLOCK_BYTES 34u
#elif defined(TYPE_Q4_0_ROCMFP4)
#define BLOCK_BYTES 18u
#else
#define BLOCK_BYTES 17u
#endif

float rocmfp_scale(uint e) {
    if (e >= 0x7fu) return 0.0;
    const int exponent = int((e >> 3) & 15u);
    const uint mantissa = e & 7u;
    if (exponent == 0) return float(mantissa) * (1.0 / 1024.0);
    return ldexp(float(8u + mantissa), exponent - 11);
}

// Codebook of spec §2.1 without a table: magnitudes 0,1,2,3,4,6,8,10 are m + max(m - 4, 0).
float fp4_value(uint c) {
    const int m = int(c & 7u);
    const float v = float(m + max(m - 4, 0));
    return (c & 8u) != 0u ? -v : v;
}

// Weights of one block, pre-scaled, in element order.
void decode_block(uint b, out float w[32]) {
#if defined(TYPE_Q8_0)
    const float d = half_bits_to_float(RD16(W, b));
    for (uint k = 0u; k < 8u; ++k) {
        const uint word = RD32_2(W, b + 2u + 4u * k);
        for (uint i = 0u; i < 4u; ++i) w[4u * k + i] = d * float(int(word << (24u - 8u * i)) >> 24);
    }
#else
#if defined(TYPE_Q4_0)
    const float d = half_bits_to_float(RD16(W, b));
    const float s_low = d, s_high = d;
    const uint qs = b + 2u;
#elif defined(TYPE_Q4_0_ROCMFP4)
    const float s_low = rocmfp_scale(RD8(W, b + 16u)), s_high = rocmfp_scale(RD8(W, b + 17u));
    const uint qs = b;
#else
    const float s_low = rocmfp_scale(RD8(W, b + 16u)), s_high = s_low;
    const uint qs = b;
#endif
    for (uint k = 0u; k < 4u; ++k) {
        // 17-byte blocks can start at any byte: assemble the word from bytes there.
#if defined(TYPE_Q4_0_ROCMFP4_FAST)
        const uint o = qs + 4u * k;
        const uint word = (o & 3u) == 0u ? W[o >> 2] : ((W[o >> 2] >> (8u * (o & 3u))) | (W[(o >> 2) + 1u] << (32u - 8u * (o & 3u))));
#else
        const uint word = RD32_2(W, qs + 4u * k);
#endif
        for (uint i = 0u; i < 4u; ++i) {
            const uint byte_v = (word >> (8u * i)) & 0xffu;
#if defined(TYPE_Q4_0)
            w[4u * k + i] = s_low * float(int(byte_v & 15u) - 8);
            w[16u + 4u * k + i] = s_high * float(int(byte_v >> 4) - 8);
#else
            w[4u * k + i] = s_low * fp4_value(byte_v & 15u);
            w[16u + 4u * k + i] = s_high * fp4_value(byte_v >> 4);
#endif
        }
    }
#endif
}

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

shared float partial[128];

void main() {
    const uint lane = gl_LocalInvocationID.x % 32u;
    const uint slot_in_group = gl_LocalInvocationID.x / 32u;
#if defined(EXPERTS)
    const Job job = make_job(gl_WorkGroupID.x * 4u + slot_in_group);
#else
    const Job job = make_job(linear_group() * 4u + slot_in_group);
#endif
    const uint n_blocks = p.cols / 32u;
    float acc[8] = float[8](0, 0, 0, 0, 0, 0, 0, 0);
    if (job.valid) {
        for (uint blk = lane; blk < n_blocks; blk += 32u) {
            float w[32];
            decode_block(job.w_row + blk * BLOCK_BYTES, w);
            for (uint t = 0u; t < 8u; ++t) {
                if (t >= job.tokens) break;
                const uint xb = job.x_base + t * p.x_stride + blk * 32u;
                float s = 0.0;
                for (uint i = 0u; i < 32u; ++i) s += w[i] * x[xb + i];
                acc[t] += s;
            }
        }
    }
    for (uint t = 0u; t < 8u; ++t) {
        if (t >= p.tokens) break;
        partial[gl_LocalInvocationID.x] = acc[t];
        barrier();
        for (uint stride = 16u; stride > 0u; stride >>= 1) {
            if (lane < stride) partial[gl_LocalInvocationID.x] += partial[gl_LocalInvocationID.x + stride];
            barrier();
        }
        if (job.valid && lane == 0u && t < job.tokens) {
            float s = partial[gl_LocalInvocationID.x];
            if (p.has_bias != 0u) s += bias[p.bias_off + job.r];
            out_f[job.out_base + t * p.out_stride + job.r] = s;
        }
        barrier();
    }
}
