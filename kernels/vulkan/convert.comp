// SPDX-License-Identifier: MIT
// out rows (DST_F32, DST_F16, DST_BF16 or DST_Q8_0) = x rows (any TYPE_*) converted, rounded exactly as
// ember::quant's quantizers round. With a row map (store_kv), source row r goes to destination row map[r].
// One invocation per output element, or per 32-weight block for Q8_0.
#version 450
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#include "common.glsl"
layout(local_size_x = 256) in;
layout(binding = 0) readonly buffer Src { uint W[]; };
#if defined(DST_F32)
layout(binding = 1) writeonly buffer Dst { float dst[]; };
#elif defined(DST_F16) || defined(DST_BF16)
layout(binding = 1) writeonly buffer Dst { uint16_t dst[]; };
#else
layout(binding = 1) writeonly buffer Dst { uint8_t dst[]; };
#endif
layout(binding = 2) readonly buffer Map { int row_map[]; };
layout(push_constant) uniform Params {
    uint src_off;     // bytes
    uint src_stride;  // bytes
    uint dst_off;     // bytes
    uint dst_stride;  // bytes
    uint cols;
    uint rows;
    uint map_off;     // words
    uint use_map;
} p;
#include "dequant.glsl"

#if defined(DST_Q8_0)
const uint UNIT = 32u;
#else
const uint UNIT = 1u;
#endif

void main() {
    const uint units_per_row = p.cols / UNIT;
    const uint idx = linear_group() * 256u + gl_LocalInvocationID.x;
    if (idx >= units_per_row * p.rows) return;
    const uint r = idx / units_per_row, u = idx % units_per_row;
    const uint src_row = p.src_off + r * p.src_stride;
    const uint dst_r = p.use_map != 0u ? uint(row_map[p.map_off + r]) : r;
    const uint dst_row = p.dst_off + dst_r * p.dst_stride;
#if defined(DST_F32)
    dst[dst_row / 4u + u] = dq_elem(src_row, u);
#elif defined(DST_F16)
    dst[dst_row / 2u + u] = uint16_t(float_to_half_bits(dq_elem(src_row, u)));
#elif defined(DST_BF16)
    dst[dst_row / 2u + u] = uint16_t(float_to_bf16_bits(dq_elem(src_row, u)));
#else
    float v[32];
    float amax = 0.0;
    for (uint i = 0u; i < 32u; ++i) {
        v[i] = dq_elem(src_row, 32u * u + i);
        if (!isnan(v[i])) amax = max(amax, abs(v[i]));
    }
    const float d = exact_div(amax, 127.0);
    const float id = d != 0.0 ? exact_div(1.0, d) : 0.0;
    const uint out_b = dst_row + 34u * u;
    const uint dh = float_to_half_bits(d);
    dst[out_b] = uint8_t(dh & 0xffu);
    dst[out_b + 1u] = uint8_t(dh >> 8);
    for (uint i = 0u; i < 32u; ++i) {
        // precise: s must be rounded before s - t, as on the CPU; a fused x * id - t decides the halfway codes
        // differently (seen on NVIDIA: a K/V code off by one now and then).
        precise const float s = v[i] * id;
        float q = 0.0;
        if (!isnan(s)) {
            const float t = trunc(s);
            q = abs(s - t) >= 0.5 ? t + sign(s) : t;
            q = clamp(q, -127.0, 127.0);
        }
        dst[out_b + 2u + i] = uint8_t(int8_t(int(q)));
    }
#endif
}
