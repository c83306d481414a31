// SPDX-License-Identifier: MIT
// AVX2/FMA/F16C kernels for float weights (F32, F16, BF16) against F32 activations, and the AVX2 table lookup.
#include "cpu/cpu_kernels.h"
#include "cpu/dot_kernels.h"
#include "cpu/avx2_common.h"  // last: opens the AVX2 region

namespace ember::cpu::detail {

const Kernel* avx2_block_kernel(gguf::TensorType type);
#if defined(EMBER_HAVE_AVXVNNI_KERNELS)
const Kernel* avxvnni_block_kernel(gguf::TensorType type);
#endif
const Kernel* avx2_kquant_kernel(gguf::TensorType type);

namespace {

struct F32 {
    static constexpr int kBytes = 4;
    static __m256 load8(const uint8_t* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
    static float load1(const uint8_t* p) { return quant::load_f32(p); }
};

struct F16 {
    static constexpr int kBytes = 2;
    static __m256 load8(const uint8_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
    static float load1(const uint8_t* p) { return _cvtsh_ss(quant::load_u16(p)); }
};

struct BF16 {
    static constexpr int kBytes = 2;
    static __m256 load8(const uint8_t* p) {
        const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
    }
    static float load1(const uint8_t* p) { return quant::bf16_to_fp32(quant::load_u16(p)); }
};

template <typename W, int T>
void tile(const void* w_row, const std::byte* act, int64_t act_stride, int64_t cols, float* out) {
    const auto* w = static_cast<const uint8_t*>(w_row);
    const float* x[T];
    for (int t = 0; t < T; ++t) x[t] = reinterpret_cast<const float*>(act + t * act_stride);
    __m256 acc0[T], acc1[T];
    for (int t = 0; t < T; ++t) acc0[t] = acc1[t] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= cols; i += 16) {
        avx2::prefetch_ahead(w + W::kBytes * i);
        const __m256 w0 = W::load8(w + W::kBytes * i);
        const __m256 w1 = W::load8(w + W::kBytes * (i + 8));
        for (int t = 0; t < T; ++t) {
            acc0[t] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x[t] + i), acc0[t]);
            acc1[t] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x[t] + i + 8), acc1[t]);
        }
    }
    for (; i + 8 <= cols; i += 8) {
        const __m256 w0 = W::load8(w + W::kBytes * i);
        for (int t = 0; t < T; ++t) acc0[t] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x[t] + i), acc0[t]);
    }
    for (int t = 0; t < T; ++t) {
        float tail = 0.0f;
        for (int64_t j = i; j < cols; ++j) tail += W::load1(w + W::kBytes * j) * x[t][j];
        out[t] = avx2::hsum(_mm256_add_ps(acc0[t], acc1[t])) + tail;
    }
}

template <typename W>
void tile_any(const void* w_row, const std::byte* act, size_t act_stride, int n_act, int64_t cols, float* out) {
    with_tile_width(n_act, [&](auto width) {
        tile<W, decltype(width)::value>(w_row, act, static_cast<int64_t>(act_stride), cols, out);
    });
}

constexpr Kernel kAvx2FloatKernels[] = {
    {TT::F32, Isa::avx2, tile_any<F32>},
    {TT::F16, Isa::avx2, tile_any<F16>},
    {TT::BF16, Isa::avx2, tile_any<BF16>},
};

}  // namespace

namespace {

template <typename W>
void accumulate(const void* row, const float* weights, int n, float* acc, int64_t acc_stride, int64_t cols) {
    const auto* r = static_cast<const uint8_t*>(row);
    int64_t c = 0;
    for (; c + 8 <= cols; c += 8) {
        const __m256 v = W::load8(r + W::kBytes * c);
        for (int i = 0; i < n; ++i) {
            float* a = acc + i * acc_stride + c;
            _mm256_storeu_ps(a, _mm256_fmadd_ps(_mm256_set1_ps(weights[i]), v, _mm256_loadu_ps(a)));
        }
    }
    for (; c < cols; ++c) {
        const float v = W::load1(r + W::kBytes * c);
        for (int i = 0; i < n; ++i) acc[i * acc_stride + c] += weights[i] * v;
    }
}

}  // namespace

bool avx2_accumulate(gguf::TensorType type, const void* row, const float* weights, int n, float* acc,
                     int64_t acc_stride, int64_t cols) {
    switch (type) {
        case TT::F32: accumulate<F32>(row, weights, n, acc, acc_stride, cols); return true;
        case TT::F16: accumulate<F16>(row, weights, n, acc, acc_stride, cols); return true;
        case TT::BF16: accumulate<BF16>(row, weights, n, acc, acc_stride, cols); return true;
        default: return false;
    }
}

namespace {

// The 32-weight block kernels: the AVX-VNNI build where avxvnni_wanted().
const Kernel* block_kernel(gguf::TensorType type) {
#if defined(EMBER_HAVE_AVXVNNI_KERNELS)
    static const bool vnni = avxvnni_wanted();
    if (vnni) return avxvnni_block_kernel(type);
#endif
    return avx2_block_kernel(type);
}

}  // namespace

const Kernel* avx2_kernel(gguf::TensorType type) {
    if (const Kernel* k = find_kernel(kAvx2FloatKernels, type)) return k;
    if (const Kernel* k = block_kernel(type)) return k;
    return avx2_kquant_kernel(type);
}

}  // namespace ember::cpu::detail

#include "cpu/avx2_region_end.h"
