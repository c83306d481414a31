// SPDX-License-Identifier: MIT
// Packs activations into Q8_1 blocks of 32 (the input of the integer dot product kernels, matvec_dot.comp): eight
// neighbouring invocations hold a block's 32 values, four each, in order. Per block d = max|v| / 127, codes
// q = round(v / d) (half away from zero, in [-127, 127]; a non-finite value gives 0) and s = d * sum(q).
// Layout (in 32-bit words from the binding's start): block n's codes at q_off + n * 8 (8 words of 4 int8 codes,
// code i in byte i % 4 of word i / 4); its (d, s) at vec2 index d_off + n.
// The includer declares `codes` (uint[]) and `scales` (vec2[]) on one binding and Q8_STORE_INVOCATIONS, its work
// group size; every invocation of the work group must call q8_1_store (it has barriers).
shared float q8_block_max[Q8_STORE_INVOCATIONS];
shared int q8_block_sum[Q8_STORE_INVOCATIONS];

int q8_1_code(float v, float inv_d) {
    const float t = v * inv_d;
    if (!(abs(t) <= 127.5)) return 0;  // NaN or infinite input
    return int(clamp(sign(t) * floor(abs(t) + 0.5), -127.0, 127.0));
}

void q8_1_store(vec4 v, bool valid, uint block, uint q_off, uint d_off) {
    const uint tid = gl_LocalInvocationID.x;
    const uint lane = tid & 7u;
    const vec4 a = abs(v);
    q8_block_max[tid] = max(max(a.x, a.y), max(a.z, a.w));
    barrier();
    for (uint step = 4u; step > 0u; step >>= 1) {
        if (lane < step) q8_block_max[tid] = max(q8_block_max[tid], q8_block_max[tid + step]);
        barrier();
    }
    const float amax = q8_block_max[tid & ~7u];
    const float d = amax / 127.0;
    const float inv_d = amax > 0.0 ? 127.0 / amax : 0.0;
    const ivec4 q = ivec4(q8_1_code(v.x, inv_d), q8_1_code(v.y, inv_d), q8_1_code(v.z, inv_d), q8_1_code(v.w, inv_d));
    q8_block_sum[tid] = q.x + q.y + q.z + q.w;
    barrier();
    for (uint step = 4u; step > 0u; step >>= 1) {
        if (lane < step) q8_block_sum[tid] += q8_block_sum[tid + step];
        barrier();
    }
    if (valid) {
        codes[q_off + block * 8u + lane] =
            (uint(q.x) & 0xffu) | ((uint(q.y) & 0xffu) << 8) | ((uint(q.z) & 0xffu) << 16) | (uint(q.w) << 24);
        if (lane == 0u) scales[d_off + block] = vec2(d, d * float(q8_block_sum[tid & ~7u]));
    }
    barrier();  // the shared sums are reused by the next call
}
