// SPDX-License-Identifier: MIT
// The cooperative-matrix core of matmul_coop.comp and experts_coop.comp: one work group computes a BM x BN tile of
// C[r, t] = sum_k A[r, k] * B[k, t] (A: weights, dequantized to f16; B: activations) with 16 x 16 x 16 f16 products
// and f32 accumulators. The includer defines BM and BN (BM / 16 * BN / 16 == 16 sub-tiles) and, per 32 columns,
// fills the shared tiles (coop_store_input, coop_store_activation) and runs COOP_MULTIPLY on its accumulators
// acc0..3 between barriers; COOP_RESULTS then gives each invocation its outputs.
//
// Precision: weights and activations are rounded to f16 (about 2^-12 relative each: a block type's scale times
// code may need 15 bits; f32 accumulation), well inside what a block type's own quantization error and the op
// suite's 3e-2 allow. Float weights (F32, F16, BF16), which the suite holds to 1e-5, keep the tiled kernels.
// (Splitting each activation into two f16 parts was tried for F16 weights: on an H200 it still came to 2e-4.)
// Weights or activations beyond the f16 range (|v| > 65504) become infinities here; nothing is clamped.
//
// Written against GL_NV_cooperative_matrix (the glslang that Debian 12 ships knows no KHR one); the build rewrites
// the SPIR-V to SPV_KHR_cooperative_matrix (spirv_coopmat_khr.py). For that rewrite to see which f16 matrix is A
// and which is B, every f16 matrix is loaded right before the product that uses it, and only the f32 accumulators
// are carried between steps.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

#define HALF_MAT fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define ACC_MAT fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>

const uint BK = 32u;
// Strides in elements. Every matrix starts at a multiple of 16 bytes and every stride is one, as cooperative loads
// and stores want; the padding also spreads neighbouring rows over the shared memory banks.
const uint KS = BK + 8u;  // w_tile, x_tile: 80 bytes a row
const uint CS = BM + 4u;  // c_tile: (BM + 4) * 4 bytes a column
const uint SUB_M = BM / 16u;
const uint SUB_TILES = (BM / 16u) * (BN / 16u);
shared float16_t w_tile[BM * KS];  // w_tile[r * KS + k]: A, row-major
shared float16_t x_tile[BN * KS];  // x_tile[t * KS + k]: B, column-major (one column per token)
shared float c_tile[BN * CS];      // c_tile[t * CS + r]: C, column-major

// Sub-tile i of this subgroup: sub-tiles go round the subgroups, at most 4 each (a work group of 256 invocations
// has at least 4 subgroups where subgroups are at most 64 wide; coop_supported() checks it).
uint coop_sub_tile(uint i) { return gl_SubgroupID + i * gl_NumSubgroups; }
bool coop_supported() { return gl_NumSubgroups * 4u >= SUB_TILES; }

void coop_store_input(uint w_index, float w) { w_tile[w_index] = float16_t(w); }
void coop_store_activation(uint x_index, float v) { x_tile[x_index] = float16_t(v); }

// acc += A * B of the current shared tiles for sub-tile s (A row block s % SUB_M, B column block s / SUB_M).
#define COOP_MULTIPLY(acc, s)                                                          \
    if ((s) < SUB_TILES) {                                                             \
        const uint a_at = ((s) % SUB_M) * 16u * KS, b_at = ((s) / SUB_M) * 16u * KS;   \
        for (uint kk = 0u; kk < BK; kk += 16u) {                                       \
            HALF_MAT a;                                                                \
            HALF_MAT b;                                                                \
            coopMatLoadNV(a, w_tile, a_at + kk, KS, false);                            \
            coopMatLoadNV(b, x_tile, b_at + kk, KS, true);                             \
            acc = coopMatMulAddNV(a, b, acc);                                          \
        }                                                                              \
    }

// Stores sub-tile s's acc into c_tile (C column-major: c_tile[t * CS + r]).
#define COOP_STORE(acc, s)                                                                          \
    if ((s) < SUB_TILES)                                                                            \
        coopMatStoreNV(acc, c_tile, ((s) / SUB_M) * 16u * CS + ((s) % SUB_M) * 16u, CS, true);

// Each invocation's outputs (output i = tid + 256 * j of the BM x BN tile: row i % BM, column i / BM), through
// c_tile.
const uint OUT_PER_INVOCATION = BM * BN / 256u;
#define COOP_RESULTS(sums)                                                              \
    COOP_STORE(acc0, coop_sub_tile(0u))                                                 \
    COOP_STORE(acc1, coop_sub_tile(1u))                                                 \
    COOP_STORE(acc2, coop_sub_tile(2u))                                                 \
    COOP_STORE(acc3, coop_sub_tile(3u))                                                 \
    barrier();                                                                          \
    for (uint j = 0u; j < OUT_PER_INVOCATION; ++j) {                                    \
        const uint i = gl_LocalInvocationID.x + 256u * j;                               \
        sums[j] = c_tile[(i / BM) * CS + i % BM];                                       \
    }
