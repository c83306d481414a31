// SPDX-License-Identifier: MIT
// Rotary embeddings, KV-cache writes and causal attention. Attention splits each (token, head) over S slices of
// the cache (flash decoding): every slice keeps a running maximum, sum and weighted V sum, and a second kernel
// merges the slices. S depends only on the batch shape, and the number of cached rows is read from device memory,
// so a decode step keeps the same launches from one token to the next (graph replay). Many queries of a small head
// (a vision encoder's bidirectional attention: thousands of patches, head size 64-80) take a tiled path instead:
// a block holds 64 queries of one head, one per thread, and streams K/V tiles through shared memory. A head's
// attention sink joins the softmax in the final normalization (the merge kernel's, or the tiled kernel's).
#include <climits>

#include "kernel_launch.cuh"
#include "quant_blocks.cuh"

namespace ember::gpu_kernels {

namespace {

// Angles in double: at position 4095 a float angle would already be off by ~2e-4 radians.
__global__ void rope_kernel(float* x, int64_t xs, int64_t rows, int64_t n_heads, const int32_t* positions, RopeArgs a,
                            const float* factors) {
    gpu::join_prior_grid();
    const int64_t r = blockIdx.x;
    const int half = a.n_rot / 2;
    for (int i = threadIdx.x; i < half; i += blockDim.x) {
        // The pair's position and frequency as engine/backend/rope_angle.h computes them.
        int32_t pos = positions[r];
        double exponent = 2.0 * i / a.n_rot;
        if (a.mode == 2) {
            const int s1 = a.sections[1], s2 = a.sections[2];
            if (i % 3 == 1 && i < 3 * s1)
                pos = positions[rows + r];
            else if (i % 3 == 2 && i < 3 * s2)
                pos = positions[2 * rows + r];
        } else if (a.mode == 3) {
            const int quarter = a.n_rot / 4;
            if (i >= quarter) pos = positions[rows + r];
            exponent = static_cast<double>(i < quarter ? i : i - quarter) / quarter;
        }
        double theta = static_cast<double>(pos) * a.freq_scale * pow(static_cast<double>(a.freq_base), -exponent);
        if (factors) theta /= factors[i];
        const float c = static_cast<float>(cos(theta)), s = static_cast<float>(sin(theta));
        const int ia = a.mode == 0 ? 2 * i : i;
        const int ib = a.mode == 0 ? 2 * i + 1 : i + half;
        for (int64_t h = 0; h < n_heads; ++h) {
            float* v = x + r * xs + h * a.head_dim;
            const float x0 = v[ia], x1 = v[ib];
            v[ia] = x0 * c - x1 * s;
            v[ib] = x0 * s + x1 * c;
        }
    }
}

// One thread per 32 elements (the last chunk of an F32/F16 row may be shorter: Q8_0 rows are whole blocks); Q8_0
// rounds exactly as quant::quantize_row.
__global__ void store_rows_kernel(const float* src, int64_t ss, int64_t rows, int64_t cols, uint32_t type,
                                  uint8_t* cache, size_t cache_stride, const int32_t* positions) {
    gpu::join_prior_grid();
    const int64_t chunks = (cols + 31) / 32;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= rows * chunks) return;
    const int64_t r = i / chunks, c = i % chunks;
    const float* in = src + r * ss + 32 * c;
    uint8_t* dst = cache + static_cast<size_t>(positions[r]) * cache_stride;
    const int count = cols - 32 * c < 32 ? static_cast<int>(cols - 32 * c) : 32;
    if (type == kF32) {
        float* o = reinterpret_cast<float*>(dst) + 32 * c;
        for (int j = 0; j < count; ++j) o[j] = in[j];
    } else if (type == kF16) {
        uint16_t* o = reinterpret_cast<uint16_t*>(dst) + 32 * c;
        for (int j = 0; j < count; ++j) o[j] = gpu::float_to_half(in[j]);
    } else {  // Q8_0
        encode_q8_0_block(in, dst + 34 * c);
    }
}

// Element i of a cache row (F32, F16 or Q8_0), the row given by its first byte.
template <uint32_t T>
__device__ __forceinline__ float cache_element(const uint8_t* row, int i) {
    if constexpr (T == kF32) {
        return reinterpret_cast<const float*>(row)[i];
    } else if constexpr (T == kF16) {
        return half_to_float(reinterpret_cast<const uint16_t*>(row)[i]);
    } else {
        const uint8_t* b = row + 34 * (i / 32);
        return half_to_float(gpu::load_u16(b)) * static_cast<float>(static_cast<int8_t>(b[2 + i % 32]));
    }
}

// The first cache row the query at `position` sees (Backend::attention's sliding window).
__device__ __forceinline__ int64_t first_visible(int64_t position, int window) {
    return window > 0 && position >= window ? position - window + 1 : 0;
}

// The factor of a head's accumulated values for its output, from the softmax's maximum and sum over the rows:
// 1 / sum, or with an attention sink the sink's e^(sink - m) joins the sum, m the larger of the sink and the maximum.
__device__ __forceinline__ float attention_scale(float run_max, float sum, const float* sink) {
    if (!(sum > 0.0f)) return 0.0f;
    if (!sink) return 1.0f / sum;
    const float m = fmaxf(run_max, *sink);
    const float shrink = expf(run_max - m);
    return shrink / (sum * shrink + expf(*sink - m));
}

constexpr int kAttentionThreads = 128;
// The split path's slices: a row's visible keys in slices of kKeysPerSlice, at most kMaxSlices. Batches of up to
// kFixedSliceTokens tokens (decode and verify) launch kMaxSlices, so each row's slicing depends on its keys alone.
constexpr int kMaxSlices = 32, kKeysPerSlice = 16;
constexpr int64_t kFixedSliceTokens = 32;
constexpr int kMaxPerLane = 16;  // head_dim <= 16 * warp size (512 on 32-lane warps)

// grid (n_head, tokens, splits). Each warp takes every warps-th cache row of the slice.
template <uint32_t KT, int PER_LANE>
__global__ __launch_bounds__(kAttentionThreads) void attention_split_kernel(
    const float* q, int64_t qs, const uint8_t* kc, size_t k_stride, const uint8_t* vc, size_t v_stride,
    const int32_t* n_kv_ptr, const int32_t* positions, AttentionArgs a, float* partial) {
    gpu::join_prior_grid();
    const int h = blockIdx.x;
    const int64_t t = blockIdx.y;
    const int split = blockIdx.z, splits = gridDim.z;
    const int warp = threadIdx.x / gpu::kWarpSize, lane = threadIdx.x % gpu::kWarpSize;
    const int warps = blockDim.x / gpu::kWarpSize;
    const int hd = a.head_dim;
    const int kv_head = h / (a.n_head / a.n_head_kv);
    const int64_t n_kv = *n_kv_ptr;
    const int64_t visible = min(n_kv, static_cast<int64_t>(positions[t]) + 1);
    const int64_t first = first_visible(positions[t], a.window);
    // This row's slices: one per kKeysPerSlice keys, at most the launch's (kMaxSlices for decode and verify batches,
    // so that a token's slices, and its rounding, are those of the same token decoded alone).
    const int64_t keys = max(visible - first, int64_t{0});
    const int64_t wanted = max((keys + kKeysPerSlice - 1) / kKeysPerSlice, int64_t{1});
    const int row_splits = static_cast<int>(min(static_cast<int64_t>(splits), wanted));
    float* out = partial + ((t * a.n_head + h) * splits + split) * static_cast<int64_t>(hd + 2);
    if (split >= row_splits) {  // past this row's slices: an empty one, which the merge skips
        if (threadIdx.x == 0) {
            out[0] = -INFINITY;
            out[1] = 0.0f;
        }
        return;
    }
    const int64_t per_split = (keys + row_splits - 1) / row_splits;
    const int64_t begin = first + split * per_split;
    const int64_t end = min(visible, begin + per_split);

    float qv[PER_LANE], acc[PER_LANE];
#pragma unroll
    for (int m = 0; m < PER_LANE; ++m) {
        const int i = lane + m * gpu::kWarpSize;
        qv[m] = i < hd ? q[t * qs + h * hd + i] * a.scale : 0.0f;
        acc[m] = 0.0f;
    }
    float run_max = -INFINITY, run_sum = 0.0f;
    for (int64_t j = begin + warp; j < end; j += warps) {
        const uint8_t* krow = kc + static_cast<size_t>(j) * k_stride;
        float s = 0.0f;
#pragma unroll
        for (int m = 0; m < PER_LANE; ++m) {
            const int i = lane + m * gpu::kWarpSize;
            if (i < hd) s += qv[m] * cache_element<KT>(krow, kv_head * hd + i);
        }
        s = gpu::warp_sum(s);
        const float new_max = fmaxf(run_max, s);
        const float correction = expf(run_max - new_max);
        const float weight = expf(s - new_max);
        run_sum = run_sum * correction + weight;
        run_max = new_max;
        const uint8_t* vrow = vc + static_cast<size_t>(j) * v_stride;
#pragma unroll
        for (int m = 0; m < PER_LANE; ++m) {
            const int i = lane + m * gpu::kWarpSize;
            acc[m] = acc[m] * correction + (i < hd ? weight * cache_element<KT>(vrow, kv_head * hd + i) : 0.0f);
        }
    }

    // Merge the warps of the block: partial layout per (t, h, split) is [max, sum, acc[hd]].
    __shared__ float w_max[32], w_sum[32];
    __shared__ float w_acc[kAttentionThreads / 32 + 1][512];
    if (lane == 0) {
        w_max[warp] = run_max;
        w_sum[warp] = run_sum;
    }
#pragma unroll
    for (int m = 0; m < PER_LANE; ++m) {
        const int i = lane + m * gpu::kWarpSize;
        if (i < hd) w_acc[warp][i] = acc[m];
    }
    __syncthreads();
    float total_max = -INFINITY;
    for (int w = 0; w < warps; ++w) total_max = fmaxf(total_max, w_max[w]);
    float total_sum = 0.0f;
    for (int w = 0; w < warps; ++w)
        if (w_max[w] > -INFINITY) total_sum += w_sum[w] * expf(w_max[w] - total_max);
    for (int i = threadIdx.x; i < hd; i += blockDim.x) {
        float v = 0.0f;
        for (int w = 0; w < warps; ++w)
            if (w_max[w] > -INFINITY) v += w_acc[w][i] * expf(w_max[w] - total_max);
        out[2 + i] = v;
    }
    if (threadIdx.x == 0) {
        out[0] = total_max;
        out[1] = total_sum;
    }
}

// grid (n_head, tokens): merges the slices into out[t, h * hd ...]. The first warp takes the slices' maximum and each
// slice's factor expf(max_s - max) once into shared memory (split_count makes at most kMaxSlices slices); every thread
// then sums the slices in order with those factors.
static_assert(kMaxSlices <= 32, "the merge's first warp takes one slice per lane");
__global__ void attention_merge_kernel(const float* partial, int splits, AttentionArgs a, float* out, int64_t os) {
    gpu::join_prior_grid();
    __shared__ float slice_max[kMaxSlices], factor[kMaxSlices];
    const int h = blockIdx.x;
    const int64_t t = blockIdx.y;
    const int hd = a.head_dim;
    const float* p = partial + (t * a.n_head + h) * splits * static_cast<int64_t>(hd + 2);
    __shared__ float m;
    if (threadIdx.x < gpu::kWarpSize) {
        const int s = static_cast<int>(threadIdx.x);
        const float ms = s < splits ? p[s * (hd + 2)] : -INFINITY;
        const float all = gpu::warp_max(ms);
        if (s < splits) {
            slice_max[s] = ms;
            factor[s] = ms > -INFINITY ? expf(ms - all) : 0.0f;
        }
        if (s == 0) m = all;
    }
    __syncthreads();
    float sum = 0.0f;
    for (int s = 0; s < splits; ++s)
        if (slice_max[s] > -INFINITY) sum += p[s * (hd + 2) + 1] * factor[s];
    const float inv = attention_scale(m, sum, a.sinks ? a.sinks + h : nullptr);
    for (int i = threadIdx.x; i < hd; i += blockDim.x) {
        float v = 0.0f;
        for (int s = 0; s < splits; ++s)
            if (slice_max[s] > -INFINITY) v += p[s * (hd + 2) + 2 + i] * factor[s];
        out[t * os + h * hd + i] = v * inv;
    }
}

constexpr int kTileQueries = 64;  // threads per block, one query each
constexpr int kTileKeys = 64;     // K/V rows per shared-memory tile
constexpr int kScoreRun = 16;     // scores computed before one online-softmax update

// grid (query tiles, n_head). Each thread keeps its query (pre-scaled) and its weighted V sum in registers; the
// block walks keys [0, max visible of its queries) in tiles, every thread reading the same K/V element (a shared
// memory broadcast). Per run of kScoreRun keys: scores, the run's maximum, one rescale, then the V update.
template <uint32_t KT, int HD>
__global__ __launch_bounds__(kTileQueries) void attention_tiled_kernel(
    const float* q, int64_t qs, int64_t tokens, const uint8_t* kc, size_t k_stride, const uint8_t* vc,
    size_t v_stride, const int32_t* n_kv_ptr, const int32_t* positions, AttentionArgs a, float* out, int64_t os) {
    gpu::join_prior_grid();
    __shared__ __align__(16) float ks[kTileKeys][HD];
    __shared__ __align__(16) float vs[kTileKeys][HD];
    __shared__ int block_begin, block_end;
    const int h = blockIdx.y;
    const int kv_head = h / (a.n_head / a.n_head_kv);
    const int64_t t = static_cast<int64_t>(blockIdx.x) * kTileQueries + threadIdx.x;
    const bool active = t < tokens;
    const int64_t n_kv = *n_kv_ptr;
    const int visible = active ? static_cast<int>(min(n_kv, static_cast<int64_t>(positions[t]) + 1)) : 0;
    const int first = active ? static_cast<int>(first_visible(positions[t], a.window)) : INT_MAX;
    if (threadIdx.x == 0) {
        block_begin = INT_MAX;
        block_end = 0;
    }
    __syncthreads();
    atomicMax(&block_end, visible);
    atomicMin(&block_begin, first);
    __syncthreads();
    const int end = block_end;

    float qv[HD], acc[HD];
#pragma unroll
    for (int i = 0; i < HD; ++i) {
        qv[i] = active ? q[t * qs + h * HD + i] * a.scale : 0.0f;
        acc[i] = 0.0f;
    }
    float run_max = -INFINITY, run_sum = 0.0f;
    for (int j0 = block_begin; j0 < end; j0 += kTileKeys) {
        const int n = end - j0 < kTileKeys ? end - j0 : kTileKeys;
        __syncthreads();
        for (int e = threadIdx.x; e < kTileKeys * HD; e += kTileQueries) {
            const int r = e / HD, i = e % HD;
            const bool in = r < n;
            ks[r][i] = in ? cache_element<KT>(kc + static_cast<size_t>(j0 + r) * k_stride, kv_head * HD + i) : 0.0f;
            vs[r][i] = in ? cache_element<KT>(vc + static_cast<size_t>(j0 + r) * v_stride, kv_head * HD + i) : 0.0f;
        }
        __syncthreads();
        for (int c0 = 0; c0 < n; c0 += kScoreRun) {
            float sc[kScoreRun];
            float run_top = -INFINITY;
#pragma unroll
            for (int u = 0; u < kScoreRun; ++u) {
                float d = 0.0f;
#pragma unroll
                for (int i = 0; i < HD; ++i) d += qv[i] * ks[c0 + u][i];
                const int j = j0 + c0 + u;
                sc[u] = c0 + u < n && j >= first && j < visible ? d : -INFINITY;
                run_top = fmaxf(run_top, sc[u]);
            }
            if (run_top == -INFINITY) continue;  // none of these keys is visible to this query
            const float new_max = fmaxf(run_max, run_top);
            const float correction = expf(run_max - new_max);
            run_max = new_max;
            run_sum *= correction;
#pragma unroll
            for (int i = 0; i < HD; ++i) acc[i] *= correction;
#pragma unroll
            for (int u = 0; u < kScoreRun; ++u) {
                const float w = expf(sc[u] - new_max);
                run_sum += w;
#pragma unroll
                for (int i = 0; i < HD; ++i) acc[i] += w * vs[c0 + u][i];
            }
        }
    }
    if (!active) return;
    const float inv = attention_scale(run_max, run_sum, a.sinks ? a.sinks + h : nullptr);
#pragma unroll
    for (int i = 0; i < HD; ++i) out[t * os + h * HD + i] = acc[i] * inv;
}

// The tiled path: at least a tile of queries, F32/F16 caches, and a head size it is built for (registers hold
// 2 x head_dim floats per thread).
bool tiled_attention_fits(int64_t tokens, uint32_t cache_type, int head_dim) {
    return tokens >= kTileQueries && (cache_type == kF32 || cache_type == kF16) &&
           (head_dim == 64 || head_dim == 72 || head_dim == 80);
}

// Grid y is at most 65535 (CUDA): the split path runs the tokens in runs of that many.
constexpr int64_t kMaxGridY = 65535;

int split_count(const Launch& l, int64_t tokens, int n_head) {
    if (tokens <= kFixedSliceTokens) return kMaxSlices;
    const int64_t blocks = tokens * n_head;
    const int64_t want = (4 * static_cast<int64_t>(l.multiprocessors) + blocks - 1) / blocks;
    return static_cast<int>(want < 1 ? 1 : want > kMaxSlices ? kMaxSlices : want);
}

}  // namespace

void rope(const Launch& l, const Rows& x, const int32_t* positions, const RopeArgs& a, const float* freq_factors) {
    launch_kernel(l, rope_kernel, static_cast<unsigned>(x.rows), 64, 0, x.data, x.stride, x.rows, x.cols / a.head_dim,
                  positions, a, freq_factors);
}

void store_rows(const Launch& l, const Rows& src, const TypedRows& cache, const int32_t* positions) {
    const int64_t n = src.rows * ((src.cols + 31) / 32);
    if (n == 0) return;
    launch_kernel(l, store_rows_kernel, static_cast<unsigned>((n + 63) / 64), 64, 0, src.data, src.stride, src.rows,
                  src.cols, cache.type, cache.data, cache.row_stride, positions);
}

size_t attention_scratch_floats(const Launch& l, int64_t tokens, const AttentionArgs& a) {
    return static_cast<size_t>(tokens * a.n_head * split_count(l, tokens, a.n_head)) * (a.head_dim + 2);
}

namespace {

void attention_tiled(const Launch& l, const Rows& q, const TypedRows& k_cache, const TypedRows& v_cache,
                     const int32_t* n_kv, const int32_t* positions, const AttentionArgs& a, const Rows& out) {
    const dim3 grid(static_cast<unsigned>((q.rows + kTileQueries - 1) / kTileQueries), static_cast<unsigned>(a.n_head));
    const auto launch = [&]<uint32_t KT, int HD>() {
        launch_kernel(l, attention_tiled_kernel<KT, HD>, grid, kTileQueries, 0, q.data, q.stride, q.rows, k_cache.data,
                      k_cache.row_stride, v_cache.data, v_cache.row_stride, n_kv, positions, a, out.data, out.stride);
    };
    const auto with_size = [&]<uint32_t KT>() {
        if (a.head_dim == 64)
            launch.template operator()<KT, 64>();
        else if (a.head_dim == 72)
            launch.template operator()<KT, 72>();
        else
            launch.template operator()<KT, 80>();
    };
    if (k_cache.type == kF32)
        with_size.template operator()<kF32>();
    else
        with_size.template operator()<kF16>();
}

void attention_run(const Launch& l, const Rows& q, const TypedRows& k_cache, const TypedRows& v_cache,
                   const int32_t* n_kv, const int32_t* positions, const AttentionArgs& a, const Rows& out,
                   float* scratch, int splits) {
    const dim3 grid(static_cast<unsigned>(a.n_head), static_cast<unsigned>(q.rows), static_cast<unsigned>(splits));
    const auto launch = [&]<uint32_t KT, int PER_LANE>() {
        launch_kernel(l, attention_split_kernel<KT, PER_LANE>, grid, kAttentionThreads, 0, q.data, q.stride,
                      k_cache.data, k_cache.row_stride, v_cache.data, v_cache.row_stride, n_kv, positions, a, scratch);
    };
    const auto with_type = [&]<int PER_LANE>() {
        if (k_cache.type == kF32)
            launch.template operator()<kF32, PER_LANE>();
        else if (k_cache.type == kF16)
            launch.template operator()<kF16, PER_LANE>();
        else
            launch.template operator()<kQ8_0, PER_LANE>();
    };
    // Elements per lane: head_dim / 32 rounded up (hipcc's wave64 targets use half as many).
    const int per_lane = (a.head_dim + 31) / 32;
    if (per_lane <= 2)
        with_type.template operator()<2>();
    else if (per_lane <= 4)
        with_type.template operator()<4>();
    else if (per_lane <= 8)
        with_type.template operator()<8>();
    else
        with_type.template operator()<kMaxPerLane>();
    launch_kernel(l, attention_merge_kernel, dim3(static_cast<unsigned>(a.n_head), static_cast<unsigned>(q.rows)), 64,
                  0, scratch, splits, a, out.data, out.stride);
}

}  // namespace

void attention(const Launch& l, const Rows& q, const TypedRows& k_cache, const TypedRows& v_cache,
               const int32_t* n_kv, const int32_t* positions, const AttentionArgs& a, const Rows& out,
               float* scratch) {
    if (tiled_attention_fits(q.rows, k_cache.type, a.head_dim)) {
        attention_tiled(l, q, k_cache, v_cache, n_kv, positions, a, out);
        return;
    }
    const int splits = split_count(l, q.rows, a.n_head);
    for (int64_t t0 = 0; t0 < q.rows; t0 += kMaxGridY) {
        const int64_t run = q.rows - t0 < kMaxGridY ? q.rows - t0 : kMaxGridY;
        const Rows qr{q.data + t0 * q.stride, run, q.cols, q.stride};
        const Rows outr{out.data + t0 * out.stride, run, out.cols, out.stride};
        float* part = scratch + t0 * a.n_head * splits * static_cast<int64_t>(a.head_dim + 2);
        attention_run(l, qr, k_cache, v_cache, n_kv, positions + t0, a, outr, part, splits);
    }
}

}  // namespace ember::gpu_kernels
