// SPDX-License-Identifier: MIT
// Closes the AVX2 region opened by avx2_common.h; the last include of an AVX2 kernel file.
#if defined(__clang__)
#pragma clang attribute pop
#elif defined(__GNUC__)
#pragma GCC pop_options
#endif
