// SPDX-License-Identifier: MIT
// The 32-weight block kernels of dot_avx2_blocks.cpp built once more for AVX2 + AVX-VNNI (Zen 5, Intel since Alder
// Lake): byte_dot becomes one vpdpbusd with the same integer sums, so every result is the AVX2 kernels' bit for bit.
// avx2_kernel picks this table where the CPU has AVX-VNNI.
#define EMBER_CPU_AVXVNNI 1
#include "dot_avx2_blocks.cpp"
