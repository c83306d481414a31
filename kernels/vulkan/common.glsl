// SPDX-License-Identifier: MIT
// Shared by every Ember compute shader: the push-descriptor bindings are plain arrays of 32-bit words, addressed
// in bytes so that blocks of any size (17, 18, 34, 210 bytes) can sit anywhere; exact fp16/bf16 conversions (the
// GPU's own pack instructions may round differently from ember::quant); and workgroup reductions that work for
// any subgroup size (8 on lavapipe, 32 on NVIDIA, 64 on AMD).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

// Byte `off` of a word array, as 0..255.
#define RD8(arr, off) ((arr[(off) >> 2] >> (((off) & 3u) * 8u)) & 0xffu)
// Little-endian 16 bits at an even byte offset.
#define RD16(arr, off) ((arr[(off) >> 2] >> (((off) & 2u) * 8u)) & 0xffffu)
// Little-endian 32 bits at an offset that is a multiple of 2.
#define RD32_2(arr, off) (((off) & 2u) == 0u ? arr[(off) >> 2] \
                          : ((arr[(off) >> 2] >> 16) | (arr[((off) >> 2) + 1u] << 16)))

float half_bits_to_float(uint h) {
    const uint sign = (h & 0x8000u) << 16;
    const uint exponent = (h >> 10) & 0x1fu;
    const uint mantissa = h & 0x3ffu;
    if (exponent == 0x1fu) return uintBitsToFloat(sign | 0x7f800000u | (mantissa << 13));
    if (exponent == 0u) {
        const float magnitude = float(mantissa) * (1.0 / 16777216.0);
        return sign != 0u ? -magnitude : magnitude;
    }
    return uintBitsToFloat(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

// Round to nearest, ties to even, as quant::fp32_to_fp16.
uint float_to_half_bits(float f) {
    const uint x = floatBitsToUint(f);
    const uint sign = (x >> 16) & 0x8000u;
    const uint ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return sign | 0x7e00u | ((ax >> 13) & 0x3ffu);
    if (ax >= 0x477ff000u) return sign | 0x7c00u;
    if (ax >= 0x38800000u) {
        const uint rebiased = ax - 0x38000000u;
        return sign | ((rebiased + 0xfffu + ((rebiased >> 13) & 1u)) >> 13);
    }
    const uint exponent = ax >> 23;
    if (exponent < 102u) return sign;
    const uint mantissa = (ax & 0x7fffffu) | 0x800000u;
    const uint shift = 126u - exponent;
    uint q = mantissa >> shift;
    const uint rest = mantissa & ((1u << shift) - 1u);
    const uint half_point = 1u << (shift - 1u);
    if (rest > half_point || (rest == half_point && (q & 1u) != 0u)) ++q;
    return sign | q;
}

uint float_to_bf16_bits(float f) {
    const uint x = floatBitsToUint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 0x40u;
    return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
}

// a / b correctly rounded in the cases that matter here (the GPU's division may be off by 2.5 ulp); one Newton
// step on the quotient, as the CPU's exact division gives.
float exact_div(float a, float b) {
    precise float q = a / b;
    precise float r = fma(-q, b, a);
    precise float q2 = fma(r, 1.0 / b, q);
    return q2;
}

// Work-group reductions. `scratch` needs one slot per subgroup; every invocation gets the result.
shared float reduce_scratch[64];

float workgroup_sum(float v) {
    v = subgroupAdd(v);
    barrier();
    if (subgroupElect()) reduce_scratch[gl_SubgroupID] = v;
    barrier();
    float total = 0.0;
    for (uint i = 0u; i < gl_NumSubgroups; ++i) total += reduce_scratch[i];
    return total;
}

float workgroup_max(float v) {
    v = subgroupMax(v);
    barrier();
    if (subgroupElect()) reduce_scratch[gl_SubgroupID] = v;
    barrier();
    float m = -1.0 / 0.0;
    for (uint i = 0u; i < gl_NumSubgroups; ++i) m = max(m, reduce_scratch[i]);
    return m;
}

// The index of this work group in a 2-D grid that covers a long 1-D range (grids are at most 65535 wide).
uint linear_group() { return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; }

// The first cache row the query at `position` sees (Backend::attention's sliding window; 0 without one).
uint first_visible(uint position, uint window) { return window > 0u && position >= window ? position - window + 1u : 0u; }

// The factor of a head's accumulated values for its output, from the softmax's maximum and sum over the rows:
// 1 / sum, or with an attention sink (Backend::attention) the sink's e^(sink - m) joins the sum, m the larger of
// the sink and the maximum.
float attention_scale(float run_max, float sum, bool has_sink, float sink) {
    if (!(sum > 0.0)) return 0.0;
    if (!has_sink) return exact_div(1.0, sum);
    const float m = max(run_max, sink);
    const float shrink = exp(run_max - m);
    return exact_div(shrink, sum * shrink + exp(sink - m));
}

// The gated-FFN activations, as the CPU backend computes them.
float silu(float v) { return v / (1.0 + exp(-v)); }
// The activations of the elementwise dispatches, written once so that the fused forms round as they do.
float sigmoid(float v) { return 1.0 / (1.0 + exp(-v)); }
float softplus(float v) { return v > 20.0 ? v : log(1.0 + exp(v)); }
// erf (GLSL has none): Abramowitz & Stegun 7.1.26, absolute error below 1.5e-7.
float erf_approx(float v) {
    const float t = 1.0 / (1.0 + 0.3275911 * abs(v));
    const float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    return sign(v) * (1.0 - poly * exp(-v * v));
}
float gelu_tanh(float v) { return 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))); }
// Activation::swiglu_clamped (gpt-oss's experts).
const float SWIGLU_LIMIT = 7.0;
const float SWIGLU_ALPHA = 1.702;
float swiglu_clamped(float gate, float up) {
    const float g = min(gate, SWIGLU_LIMIT);
    const float u = clamp(up, -SWIGLU_LIMIT, SWIGLU_LIMIT);
    return g / (1.0 + exp(-SWIGLU_ALPHA * g)) * (u + 1.0);
}
// act(gate, up) of the gated products by act code (vk_ops_gated.cpp): 0 silu, 1 gelu (tanh), 2 swiglu_clamped.
float gated_act(uint act, float gate, float up) {
    if (act == 0u) return silu(gate) * up;
    if (act == 1u) return gelu_tanh(gate) * up;
    return swiglu_clamped(gate, up);
}
